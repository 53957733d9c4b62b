
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-quota' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-quota'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-quota' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Would these manifests pass ResourceQuota admission? Explain every match and every miss')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a ResourceQuota: hard limits, scopes, and priority-class scope selectors')
            [CompletionResult]::new('resourcequota', 'resourcequota', [CompletionResultType]::ParameterValue, 'Create a ResourceQuota: hard limits, scopes, and priority-class scope selectors')
            [CompletionResult]::new('describe', 'describe', [CompletionResultType]::ParameterValue, 'Show quotas as Used/Hard tables with percentages; scopes and selectors in words')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'The quota these manifests need: headroom missing per quota, or quotas sized to admit them')
            [CompletionResult]::new('snapshot', 'snapshot', [CompletionResultType]::ParameterValue, 'Save quotas, LimitRanges, classes and workloads as one List, for offline checks (CI)')
            [CompletionResult]::new('why', 'why', [CompletionResultType]::ParameterValue, 'Why are a workload''s pods missing? The quota that refuses them and the smallest fix')
            [CompletionResult]::new('capacity', 'capacity', [CompletionResultType]::ParameterValue, 'The cluster''s quotas against its nodes: allocatable, promised and used per resource')
            [CompletionResult]::new('uncovered', 'uncovered', [CompletionResultType]::ParameterValue, 'Namespaces no quota caps: without any quota, or without a cap on one resource')
            [CompletionResult]::new('blocked', 'blocked', [CompletionResultType]::ParameterValue, 'Workloads a quota blocks right now, one line each with the smallest fix')
            [CompletionResult]::new('guard', 'guard', [CompletionResultType]::ParameterValue, 'The same answers at `kubectl apply` time, from the API server itself: an admission webhook')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version, as --version does (-o json|yaml: with the Kubernetes releases it knows)')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell, elvish)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-quota;check' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Manifests to check: files, directories, http(s) URLs, or - for standard input (repeatable)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Manifests to check: files, directories, http(s) URLs, or - for standard input (repeatable)')
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'A kustomization directory, built as `kubectl apply -k` builds it (`kubectl kustomize`)')
            [CompletionResult]::new('--kustomize', '--kustomize', [CompletionResultType]::ParameterName, 'A kustomization directory, built as `kubectl apply -k` builds it (`kubectl kustomize`)')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Offline mode: the cluster''s objects (ResourceQuotas with status, LimitRanges, PriorityClasses, StorageClasses, RuntimeClasses) from files; no cluster is contacted')
            [CompletionResult]::new('--admission-config', '--admission-config', [CompletionResultType]::ParameterName, 'The API server''s admission configuration (ResourceQuota limitedResources)')
            [CompletionResult]::new('--nodes', '--nodes', [CompletionResultType]::ParameterName, 'Schedulable node count, to check a DaemonSet''s pods')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: junit is JUnit XML, github GitHub Actions annotations (default: text; under GitHub Actions, GITHUB_ACTIONS=true, the text report followed by annotations)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: junit is JUnit XML, github GitHub Actions annotations (default: text; under GitHub Actions, GITHUB_ACTIONS=true, the text report followed by annotations)')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Answer as this Kubernetes release would (1.20 to 1.38, e.g. 1.33 or v1.33.2; 1.38''s rules are read from its pre-release). Offline default: the snapshot''s release, else 1.37; live: the server''s own version')
            [CompletionResult]::new('--allow-privileged', '--allow-privileged', [CompletionResultType]::ParameterName, 'Whether the API server runs with --allow-privileged=true, which no API shows: false refuses privileged containers as upstream''s default does. Default: allowed, as most distributions run it; a report with a privileged container says it rests on this')
            [CompletionResult]::new('--decision-timeout', '--decision-timeout', [CompletionResultType]::ParameterName, 'How long one document may take to decide (as --request-timeout takes a duration). Past it, the rest of that document is reported undecided, saying so, and the next one is checked')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Process directories given with -f recursively')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Process directories given with -f recursively')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only what would be refused')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only what would be refused')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Explain every document in full (text output), as -o json|yaml does; by default only what is refused, undecided or charged near a limit is explained, and the rest is a line each')
            [CompletionResult]::new('--fail-on-ceiling', '--fail-on-ceiling', [CompletionResultType]::ParameterName, 'Exit 1 when quota stops an autoscaler (HPA, KEDA ScaledObject) below its maximum, not only when it refuses what runs now')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;create' {
            [CompletionResult]::new('--hard', '--hard', [CompletionResultType]::ParameterName, 'A comma-delimited set of resource=quantity pairs that define a hard limit')
            [CompletionResult]::new('--scopes', '--scopes', [CompletionResultType]::ParameterName, 'A comma-delimited set of quota scopes that must all match each object tracked by the quota')
            [CompletionResult]::new('--priority-class', '--priority-class', [CompletionResultType]::ParameterName, 'Track only pods with one of these PriorityClasses (a `PriorityClass In` scope selector)')
            [CompletionResult]::new('--scope-selector', '--scope-selector', [CompletionResultType]::ParameterName, 'A scope selector expression: ''SCOPE OPERATOR [VALUE,...]'' (repeatable), e.g. ''PriorityClass In high,medium'', ''PriorityClass DoesNotExist''')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Must be "none", "server", or "client". client: print the object, send nothing; server: submit with dryRun=All, persist nothing')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (default: `resourcequota/NAME created`)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (default: `resourcequota/NAME created`)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;resourcequota' {
            [CompletionResult]::new('--hard', '--hard', [CompletionResultType]::ParameterName, 'A comma-delimited set of resource=quantity pairs that define a hard limit')
            [CompletionResult]::new('--scopes', '--scopes', [CompletionResultType]::ParameterName, 'A comma-delimited set of quota scopes that must all match each object tracked by the quota')
            [CompletionResult]::new('--priority-class', '--priority-class', [CompletionResultType]::ParameterName, 'Track only pods with one of these PriorityClasses (a `PriorityClass In` scope selector)')
            [CompletionResult]::new('--scope-selector', '--scope-selector', [CompletionResultType]::ParameterName, 'A scope selector expression: ''SCOPE OPERATOR [VALUE,...]'' (repeatable), e.g. ''PriorityClass In high,medium'', ''PriorityClass DoesNotExist''')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Must be "none", "server", or "client". client: print the object, send nothing; server: submit with dryRun=All, persist nothing')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (default: `resourcequota/NAME created`)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (default: `resourcequota/NAME created`)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;describe' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only quotas whose labels match this selector (`-l team=a`, `env in (prod,staging)`, `!legacy`; `=`, `==`, `!=`, `in`, `notin`, `key`, `!key`, comma-separated)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only quotas whose labels match this selector (`-l team=a`, `env in (prod,staging)`, `!legacy`; `=`, `==`, `!=`, `in`, `notin`, `key`, `!key`, comma-separated)')
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Order: by name, or by how close to a limit (highest use first). Default: by name, or in the order the quotas are named')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format; wide adds spec.hard values the quota controller has not synced yet')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format; wide adds spec.hard values the quota controller has not synced yet')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Offline: describe the ResourceQuotas in these files instead of the cluster''s')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Quotas of every namespace, grouped by namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Quotas of every namespace, grouped by namespace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;plan' {
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'A kustomization directory, built as `kubectl apply -k` builds it (`kubectl kustomize`)')
            [CompletionResult]::new('--kustomize', '--kustomize', [CompletionResultType]::ParameterName, 'A kustomization directory, built as `kubectl apply -k` builds it (`kubectl kustomize`)')
            [CompletionResult]::new('--admission-config', '--admission-config', [CompletionResultType]::ParameterName, 'The API server''s admission configuration (ResourceQuota limitedResources)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output: text, JSON, or YAML ResourceQuota manifests sized to admit the release')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output: text, JSON, or YAML ResourceQuota manifests sized to admit the release')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Manifests of the release: files, directories, http(s) URLs, or - for standard input (repeatable)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Manifests of the release: files, directories, http(s) URLs, or - for standard input (repeatable)')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Offline mode: the cluster''s objects from files (e.g. `kubectl quota snapshot`)')
            [CompletionResult]::new('--nodes', '--nodes', [CompletionResultType]::ParameterName, 'Schedulable node count, to count a DaemonSet''s pods')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Process directories given with -f recursively')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Process directories given with -f recursively')
            [CompletionResult]::new('--autoscalers-at-max', '--autoscalers-at-max', [CompletionResultType]::ParameterName, 'Size the quotas for every autoscaler (HPA, KEDA ScaledObject) at its maximum: each workload one targets runs its maxReplicas')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;snapshot' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;why' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;capacity' {
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'Break each resource''s promise down per namespace, largest share first')
            [CompletionResult]::new('--resource', '--resource', [CompletionResultType]::ParameterName, 'Only this resource: cpu, memory or ephemeral-storage (its requests and limits), requests.cpu or limits.memory (that one), pods, hugepages-2Mi, nvidia.com/gpu, ...')
            [CompletionResult]::new('--exclude-namespaces', '--exclude-namespaces', [CompletionResultType]::ParameterName, 'Namespaces left out of the promise (comma-separated; empty for none)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Offline: read these files (a `snapshot -A`) instead of the cluster')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace (the default for this cluster-wide view; with -n, only that one)')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace (the default for this cluster-wide view; with -n, only that one)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;uncovered' {
            [CompletionResult]::new('--resource', '--resource', [CompletionResultType]::ParameterName, 'Namespaces with no cap on this resource for every pod (cpu, memory, nvidia.com/gpu, ...)')
            [CompletionResult]::new('--exclude-namespaces', '--exclude-namespaces', [CompletionResultType]::ParameterName, 'Namespaces not looked at (comma-separated; empty for none)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Offline: read these files (a `snapshot -A`) instead of the cluster')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace (the default for this cluster-wide view; with -n, only that one)')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace (the default for this cluster-wide view; with -n, only that one)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;blocked' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Offline: read these files (a `snapshot`) instead of the cluster')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Workloads of every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Workloads of every namespace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;guard' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the webhook over HTTPS: /validate, /healthz, /readyz, /metrics, /status')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Register the webhook (and, without --url, run the guard in the cluster)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the webhook registration first, then the in-cluster guard')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Registered? Reachable? Synced? Which release''s rules answer?')
            [CompletionResult]::new('certs', 'certs', [CompletionResultType]::ParameterValue, 'Make a CA and a serving certificate for a guard outside the cluster')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-quota;guard;serve' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address and port to listen on')
            [CompletionResult]::new('--tls-cert-file', '--tls-cert-file', [CompletionResultType]::ParameterName, 'The serving certificate (PEM); read again when it changes')
            [CompletionResult]::new('--tls-private-key-file', '--tls-private-key-file', [CompletionResultType]::ParameterName, 'The serving certificate''s private key (PEM); read again when it changes')
            [CompletionResult]::new('--guard-namespace', '--guard-namespace', [CompletionResultType]::ParameterName, 'The guard''s own namespace: never spoken about')
            [CompletionResult]::new('--admission-config', '--admission-config', [CompletionResultType]::ParameterName, 'The API server''s admission configuration (its ResourceQuota `limitedResources`)')
            [CompletionResult]::new('--dry-run-timeout', '--dry-run-timeout', [CompletionResultType]::ParameterName, 'How long one dry run may take (default: half the webhook''s 2-second timeout); past it the webhooks are named instead')
            [CompletionResult]::new('--decision-timeout', '--decision-timeout', [CompletionResultType]::ParameterName, 'How long a review may take from its arrival to its answer (below the webhook''s timeoutSeconds, 2 s as installed); past it the review is answered allowed, unchecked, with a warning saying so, and counted as late')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--dry-run-webhooks', '--dry-run-webhooks', [CompletionResultType]::ParameterName, 'Where a mutating webhook (a sidecar injector) sees a workload''s pods, ask the API server for its pod in a dry run (dryRun=All) and answer for the pods as it returns them. Needs `create` on pods (`guard install --dry-run-webhooks` grants it)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;guard;install' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Register exactly this URL (a guard outside the cluster) instead of running one inside')
            [CompletionResult]::new('--ca-file', '--ca-file', [CompletionResultType]::ParameterName, 'With --url: the CA (PEM) that signed the guard''s serving certificate')
            [CompletionResult]::new('--guard-namespace', '--guard-namespace', [CompletionResultType]::ParameterName, 'The namespace the in-cluster guard runs in')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'The in-cluster guard''s image')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, '`client`: print the objects, apply nothing')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format of --dry-run=client')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format of --dry-run=client')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--cert-manager', '--cert-manager', [CompletionResultType]::ParameterName, 'Let cert-manager issue the serving certificate and inject the CA, instead of a CA of ours')
            [CompletionResult]::new('--dry-run-webhooks', '--dry-run-webhooks', [CompletionResultType]::ParameterName, 'Run the in-cluster guard with `serve --dry-run-webhooks`, and let it create pods in dry runs (`create` on pods in its ClusterRole; nothing is ever stored)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;guard;uninstall' {
            [CompletionResult]::new('--guard-namespace', '--guard-namespace', [CompletionResultType]::ParameterName, 'The namespace the in-cluster guard runs in')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;guard;status' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;guard;certs' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'A DNS name or IP address the API server calls the guard at (repeatable)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Where to write ca.crt, tls.crt and tls.key')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;guard;help' {
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the webhook over HTTPS: /validate, /healthz, /readyz, /metrics, /status')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Register the webhook (and, without --url, run the guard in the cluster)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the webhook registration first, then the in-cluster guard')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Registered? Reachable? Synced? Which release''s rules answer?')
            [CompletionResult]::new('certs', 'certs', [CompletionResultType]::ParameterValue, 'Make a CA and a serving certificate for a guard outside the cluster')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-quota;guard;help;serve' {
            break
        }
        'kubectl-quota;guard;help;install' {
            break
        }
        'kubectl-quota;guard;help;uninstall' {
            break
        }
        'kubectl-quota;guard;help;status' {
            break
        }
        'kubectl-quota;guard;help;certs' {
            break
        }
        'kubectl-quota;guard;help;help' {
            break
        }
        'kubectl-quota;version' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (default: one line, as `--version` prints it)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (default: one line, as `--version` prints it)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;completion' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The name of the kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The name of the kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The name of the kubeconfig user to use')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'The length of time to wait before giving up on a single server request: seconds, or numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command''s requests must end within 5m0s together (`guard serve` excepted)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the kubeconfig context''s namespace; offline: `default`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-quota;help' {
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Would these manifests pass ResourceQuota admission? Explain every match and every miss')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a ResourceQuota: hard limits, scopes, and priority-class scope selectors')
            [CompletionResult]::new('describe', 'describe', [CompletionResultType]::ParameterValue, 'Show quotas as Used/Hard tables with percentages; scopes and selectors in words')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'The quota these manifests need: headroom missing per quota, or quotas sized to admit them')
            [CompletionResult]::new('snapshot', 'snapshot', [CompletionResultType]::ParameterValue, 'Save quotas, LimitRanges, classes and workloads as one List, for offline checks (CI)')
            [CompletionResult]::new('why', 'why', [CompletionResultType]::ParameterValue, 'Why are a workload''s pods missing? The quota that refuses them and the smallest fix')
            [CompletionResult]::new('capacity', 'capacity', [CompletionResultType]::ParameterValue, 'The cluster''s quotas against its nodes: allocatable, promised and used per resource')
            [CompletionResult]::new('uncovered', 'uncovered', [CompletionResultType]::ParameterValue, 'Namespaces no quota caps: without any quota, or without a cap on one resource')
            [CompletionResult]::new('blocked', 'blocked', [CompletionResultType]::ParameterValue, 'Workloads a quota blocks right now, one line each with the smallest fix')
            [CompletionResult]::new('guard', 'guard', [CompletionResultType]::ParameterValue, 'The same answers at `kubectl apply` time, from the API server itself: an admission webhook')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version, as --version does (-o json|yaml: with the Kubernetes releases it knows)')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell, elvish)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-quota;help;check' {
            break
        }
        'kubectl-quota;help;create' {
            break
        }
        'kubectl-quota;help;describe' {
            break
        }
        'kubectl-quota;help;plan' {
            break
        }
        'kubectl-quota;help;snapshot' {
            break
        }
        'kubectl-quota;help;why' {
            break
        }
        'kubectl-quota;help;capacity' {
            break
        }
        'kubectl-quota;help;uncovered' {
            break
        }
        'kubectl-quota;help;blocked' {
            break
        }
        'kubectl-quota;help;guard' {
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the webhook over HTTPS: /validate, /healthz, /readyz, /metrics, /status')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Register the webhook (and, without --url, run the guard in the cluster)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the webhook registration first, then the in-cluster guard')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Registered? Reachable? Synced? Which release''s rules answer?')
            [CompletionResult]::new('certs', 'certs', [CompletionResultType]::ParameterValue, 'Make a CA and a serving certificate for a guard outside the cluster')
            break
        }
        'kubectl-quota;help;guard;serve' {
            break
        }
        'kubectl-quota;help;guard;install' {
            break
        }
        'kubectl-quota;help;guard;uninstall' {
            break
        }
        'kubectl-quota;help;guard;status' {
            break
        }
        'kubectl-quota;help;guard;certs' {
            break
        }
        'kubectl-quota;help;version' {
            break
        }
        'kubectl-quota;help;completion' {
            break
        }
        'kubectl-quota;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
