# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_quota_global_optspecs
    string join \n kubeconfig= context= cluster= user= as= as-group= request-timeout= n/namespace= h/help V/version
end

function __fish_kubectl_quota_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_quota_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_quota_using_subcommand
    set -l cmd (__fish_kubectl_quota_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "check" -d 'Would these manifests pass ResourceQuota admission? Explain every match and every miss'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "create" -d 'Create a ResourceQuota: hard limits, scopes, and priority-class scope selectors'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "resourcequota" -d 'Create a ResourceQuota: hard limits, scopes, and priority-class scope selectors'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "describe" -d 'Show quotas as Used/Hard tables with percentages; scopes and selectors in words'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "plan" -d 'The quota these manifests need: headroom missing per quota, or quotas sized to admit them'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "snapshot" -d 'Save quotas, LimitRanges, classes and workloads as one List, for offline checks (CI)'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "why" -d 'Why are a workload\'s pods missing? The quota that refuses them and the smallest fix'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "capacity" -d 'The cluster\'s quotas against its nodes: allocatable, promised and used per resource'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "uncovered" -d 'Namespaces no quota caps: without any quota, or without a cap on one resource'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "blocked" -d 'Workloads a quota blocks right now, one line each with the smallest fix'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "guard" -d 'The same answers at `kubectl apply` time, from the API server itself: an admission webhook'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "version" -d 'Print the version, as --version does (-o json|yaml: with the Kubernetes releases it knows)'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish, powershell, elvish)'
complete -c kubectl-quota -n "__fish_kubectl_quota_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -s f -l filename -d 'Manifests to check: files, directories, http(s) URLs, or - for standard input (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -s k -l kustomize -d 'A kustomization directory, built as `kubectl apply -k` builds it (`kubectl kustomize`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l state -d 'Offline mode: the cluster\'s objects (ResourceQuotas with status, LimitRanges, PriorityClasses, StorageClasses, RuntimeClasses) from files; no cluster is contacted' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l admission-config -d 'The API server\'s admission configuration (ResourceQuota limitedResources)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l nodes -d 'Schedulable node count, to check a DaemonSet\'s pods' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -s o -l output -d 'Output format: junit is JUnit XML, github GitHub Actions annotations (default: text; under GitHub Actions, GITHUB_ACTIONS=true, the text report followed by annotations)' -r -f -a "text\t''
json\t''
yaml\t''
junit\t''
github\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l kubernetes-version -d 'Answer as this Kubernetes release would (1.20 to 1.38, e.g. 1.33 or v1.33.2; 1.38\'s rules are read from its pre-release). Offline default: the snapshot\'s release, else 1.37; live: the server\'s own version' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l allow-privileged -d 'Whether the API server runs with --allow-privileged=true, which no API shows: false refuses privileged containers as upstream\'s default does. Default: allowed, as most distributions run it; a report with a privileged container says it rests on this' -r -f -a "true\t''
false\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l decision-timeout -d 'How long one document may take to decide (as --request-timeout takes a duration). Past it, the rest of that document is reported undecided, saying so, and the next one is checked' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -s R -l recursive -d 'Process directories given with -f recursively'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -s q -l quiet -d 'Print only what would be refused'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l explain -d 'Explain every document in full (text output), as -o json|yaml does; by default only what is refused, undecided or charged near a limit is explained, and the rest is a line each'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -l fail-on-ceiling -d 'Exit 1 when quota stops an autoscaler (HPA, KEDA ScaledObject) below its maximum, not only when it refuses what runs now'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand check" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l hard -d 'A comma-delimited set of resource=quantity pairs that define a hard limit' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l scopes -d 'A comma-delimited set of quota scopes that must all match each object tracked by the quota' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l priority-class -d 'Track only pods with one of these PriorityClasses (a `PriorityClass In` scope selector)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l scope-selector -d 'A scope selector expression: \'SCOPE OPERATOR [VALUE,...]\' (repeatable), e.g. \'PriorityClass In high,medium\', \'PriorityClass DoesNotExist\'' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l dry-run -d 'Must be "none", "server", or "client". client: print the object, send nothing; server: submit with dryRun=All, persist nothing' -r -f -a "none\t''
client\t''
server\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -s o -l output -d 'Output format (default: `resourcequota/NAME created`)' -r -f -a "yaml\t''
json\t''
name\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand create" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l hard -d 'A comma-delimited set of resource=quantity pairs that define a hard limit' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l scopes -d 'A comma-delimited set of quota scopes that must all match each object tracked by the quota' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l priority-class -d 'Track only pods with one of these PriorityClasses (a `PriorityClass In` scope selector)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l scope-selector -d 'A scope selector expression: \'SCOPE OPERATOR [VALUE,...]\' (repeatable), e.g. \'PriorityClass In high,medium\', \'PriorityClass DoesNotExist\'' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l dry-run -d 'Must be "none", "server", or "client". client: print the object, send nothing; server: submit with dryRun=All, persist nothing' -r -f -a "none\t''
client\t''
server\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -s o -l output -d 'Output format (default: `resourcequota/NAME created`)' -r -f -a "yaml\t''
json\t''
name\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand resourcequota" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -s l -l selector -d 'Only quotas whose labels match this selector (`-l team=a`, `env in (prod,staging)`, `!legacy`; `=`, `==`, `!=`, `in`, `notin`, `key`, `!key`, comma-separated)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l sort -d 'Order: by name, or by how close to a limit (highest use first). Default: by name, or in the order the quotas are named' -r -f -a "name\t''
usage\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -s o -l output -d 'Output format; wide adds spec.hard values the quota controller has not synced yet' -r -f -a "text\t''
wide\t''
json\t''
yaml\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l state -d 'Offline: describe the ResourceQuotas in these files instead of the cluster\'s' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -s A -l all-namespaces -d 'Quotas of every namespace, grouped by namespace'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand describe" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -s k -l kustomize -d 'A kustomization directory, built as `kubectl apply -k` builds it (`kubectl kustomize`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l admission-config -d 'The API server\'s admission configuration (ResourceQuota limitedResources)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -s o -l output -d 'Output: text, JSON, or YAML ResourceQuota manifests sized to admit the release' -r -f -a "text\t''
json\t''
yaml\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -s f -l filename -d 'Manifests of the release: files, directories, http(s) URLs, or - for standard input (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l state -d 'Offline mode: the cluster\'s objects from files (e.g. `kubectl quota snapshot`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l nodes -d 'Schedulable node count, to count a DaemonSet\'s pods' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -s R -l recursive -d 'Process directories given with -f recursively'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -l autoscalers-at-max -d 'Size the quotas for every autoscaler (HPA, KEDA ScaledObject) at its maximum: each workload one targets runs its maxReplicas'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand plan" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -s o -l output -d 'Output format' -r -f -a "yaml\t''
json\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -s A -l all-namespaces -d 'Every namespace'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand snapshot" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -s o -l output -d 'Output format' -r -f -a "text\t''
json\t''
yaml\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand why" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l by -d 'Break each resource\'s promise down per namespace, largest share first' -r -f -a "namespace\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l resource -d 'Only this resource: cpu, memory or ephemeral-storage (its requests and limits), requests.cpu or limits.memory (that one), pods, hugepages-2Mi, nvidia.com/gpu, ...' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l exclude-namespaces -d 'Namespaces left out of the promise (comma-separated; empty for none)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -s o -l output -d 'Output format' -r -f -a "text\t''
json\t''
yaml\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l state -d 'Offline: read these files (a `snapshot -A`) instead of the cluster' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -s A -l all-namespaces -d 'Every namespace (the default for this cluster-wide view; with -n, only that one)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand capacity" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l resource -d 'Namespaces with no cap on this resource for every pod (cpu, memory, nvidia.com/gpu, ...)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l exclude-namespaces -d 'Namespaces not looked at (comma-separated; empty for none)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -s o -l output -d 'Output format' -r -f -a "text\t''
json\t''
yaml\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l state -d 'Offline: read these files (a `snapshot -A`) instead of the cluster' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -s A -l all-namespaces -d 'Every namespace (the default for this cluster-wide view; with -n, only that one)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand uncovered" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -s o -l output -d 'Output format' -r -f -a "text\t''
json\t''
yaml\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -l state -d 'Offline: read these files (a `snapshot`) instead of the cluster' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -s A -l all-namespaces -d 'Workloads of every namespace'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand blocked" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -f -a "serve" -d 'Serve the webhook over HTTPS: /validate, /healthz, /readyz, /metrics, /status'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -f -a "install" -d 'Register the webhook (and, without --url, run the guard in the cluster)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -f -a "uninstall" -d 'Remove the webhook registration first, then the in-cluster guard'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -f -a "status" -d 'Registered? Reachable? Synced? Which release\'s rules answer?'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -f -a "certs" -d 'Make a CA and a serving certificate for a guard outside the cluster'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and not __fish_seen_subcommand_from serve install uninstall status certs help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l listen -d 'Address and port to listen on' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l tls-cert-file -d 'The serving certificate (PEM); read again when it changes' -r -F
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l tls-private-key-file -d 'The serving certificate\'s private key (PEM); read again when it changes' -r -F
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l guard-namespace -d 'The guard\'s own namespace: never spoken about' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l admission-config -d 'The API server\'s admission configuration (its ResourceQuota `limitedResources`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l dry-run-timeout -d 'How long one dry run may take (default: half the webhook\'s 2-second timeout); past it the webhooks are named instead' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l decision-timeout -d 'How long a review may take from its arrival to its answer (below the webhook\'s timeoutSeconds, 2 s as installed); past it the review is answered allowed, unchecked, with a warning saying so, and counted as late' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -l dry-run-webhooks -d 'Where a mutating webhook (a sidecar injector) sees a workload\'s pods, ask the API server for its pod in a dry run (dryRun=All) and answer for the pods as it returns them. Needs `create` on pods (`guard install --dry-run-webhooks` grants it)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from serve" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l url -d 'Register exactly this URL (a guard outside the cluster) instead of running one inside' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l ca-file -d 'With --url: the CA (PEM) that signed the guard\'s serving certificate' -r -F
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l guard-namespace -d 'The namespace the in-cluster guard runs in' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l image -d 'The in-cluster guard\'s image' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l dry-run -d '`client`: print the objects, apply nothing' -r -f -a "none\t''
client\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -s o -l output -d 'Output format of --dry-run=client' -r -f -a "yaml\t''
json\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l cert-manager -d 'Let cert-manager issue the serving certificate and inject the CA, instead of a CA of ours'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -l dry-run-webhooks -d 'Run the in-cluster guard with `serve --dry-run-webhooks`, and let it create pods in dry runs (`create` on pods in its ClusterRole; nothing is ever stored)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from install" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -l guard-namespace -d 'The namespace the in-cluster guard runs in' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from uninstall" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l host -d 'A DNS name or IP address the API server calls the guard at (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l dir -d 'Where to write ca.crt, tls.crt and tls.key' -r -F
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from certs" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "serve" -d 'Serve the webhook over HTTPS: /validate, /healthz, /readyz, /metrics, /status'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "install" -d 'Register the webhook (and, without --url, run the guard in the cluster)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove the webhook registration first, then the in-cluster guard'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "status" -d 'Registered? Reachable? Synced? Which release\'s rules answer?'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "certs" -d 'Make a CA and a serving certificate for a guard outside the cluster'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -s o -l output -d 'Output format (default: one line, as `--version` prints it)' -r -f -a "json\t''
yaml\t''"
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand version" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -l kubeconfig -d 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -l context -d 'The name of the kubeconfig context to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -l cluster -d 'The name of the kubeconfig cluster to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -l user -d 'The name of the kubeconfig user to use' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -l request-timeout -d 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command\'s requests must end within 5m0s together (`guard serve` excepted)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -s n -l namespace -d 'The namespace (default: the kubeconfig context\'s namespace; offline: `default`)' -r
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -s h -l help -d 'Print help'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand completion" -s V -l version -d 'Print version'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "check" -d 'Would these manifests pass ResourceQuota admission? Explain every match and every miss'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "create" -d 'Create a ResourceQuota: hard limits, scopes, and priority-class scope selectors'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "describe" -d 'Show quotas as Used/Hard tables with percentages; scopes and selectors in words'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "plan" -d 'The quota these manifests need: headroom missing per quota, or quotas sized to admit them'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "snapshot" -d 'Save quotas, LimitRanges, classes and workloads as one List, for offline checks (CI)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "why" -d 'Why are a workload\'s pods missing? The quota that refuses them and the smallest fix'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "capacity" -d 'The cluster\'s quotas against its nodes: allocatable, promised and used per resource'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "uncovered" -d 'Namespaces no quota caps: without any quota, or without a cap on one resource'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "blocked" -d 'Workloads a quota blocks right now, one line each with the smallest fix'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "guard" -d 'The same answers at `kubectl apply` time, from the API server itself: an admission webhook'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "version" -d 'Print the version, as --version does (-o json|yaml: with the Kubernetes releases it knows)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish, powershell, elvish)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and not __fish_seen_subcommand_from check create describe plan snapshot why capacity uncovered blocked guard version completion help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and __fish_seen_subcommand_from guard" -f -a "serve" -d 'Serve the webhook over HTTPS: /validate, /healthz, /readyz, /metrics, /status'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and __fish_seen_subcommand_from guard" -f -a "install" -d 'Register the webhook (and, without --url, run the guard in the cluster)'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and __fish_seen_subcommand_from guard" -f -a "uninstall" -d 'Remove the webhook registration first, then the in-cluster guard'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and __fish_seen_subcommand_from guard" -f -a "status" -d 'Registered? Reachable? Synced? Which release\'s rules answer?'
complete -c kubectl-quota -n "__fish_kubectl_quota_using_subcommand help; and __fish_seen_subcommand_from guard" -f -a "certs" -d 'Make a CA and a serving certificate for a guard outside the cluster'
