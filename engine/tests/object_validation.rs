//! Rule table, validation before admission: what the API server refuses with 422 before quota
//! is asked (names per kind, generateName, namespace, negative pod counts). Messages are the
//! server's as kubectl prints them (apimachinery's `IsDNS1123Subdomain`, `IsDNS1123Label`,
//! `IsDNS1035Label` texts; `ValidateNonnegativeField`'s "must be greater than or equal to 0").

use kubectl_quota_engine::admission::pvc_resize::resize_refusal;
use kubectl_quota_engine::manifest::parse_str;
use kubectl_quota_engine::object_validation::{invalid_message, ServerFlags};
use kubectl_quota_engine::objects::{decode, Object, StorageClassInfo};

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn verdict(yaml: &str) -> Option<String> {
    let docs = parse_str("t.yaml", yaml).expect("test manifest parses");
    invalid_message(&decode(&docs[0]).expect("test manifest decodes"))
}

fn obj(api: &str, kind: &str, meta: &str, spec: &str) -> String {
    format!("apiVersion: {api}\nkind: {kind}\nmetadata: {meta}\n{spec}")
}

const POD_SPEC: &str = "spec: {containers: [{name: a, image: b}]}\n";
/// A Job's pods must not restart always (see the template rules below).
const JOB_POD_SPEC: &str = "spec: {restartPolicy: Never, containers: [{name: a, image: b}]}\n";

fn deploy(spec: &str) -> String {
    obj("apps/v1", "Deployment", "{name: web}", &format!("spec: {{{spec}selector: {{}}, template: {{{POD_SPEC}}}}}\n"))
}

#[test]
fn names_and_counts_are_validated_before_quota() {
    let rows: Vec<(&str, String, Option<String>)> = vec![
        ("a valid pod passes", obj("v1", "Pod", "{name: web}", POD_SPEC), None),
        (
            "pod name with capitals and underscore",
            obj("v1", "Pod", "{name: Foo_Bar}", POD_SPEC),
            Some(format!("The Pod \"Foo_Bar\" is invalid: metadata.name: Invalid value: \"Foo_Bar\": {SUBDOMAIN}")),
        ),
        (
            "a newline in a name is quoted, not printed",
            obj("v1", "Pod", "{name: \"a\\nb\"}", POD_SPEC),
            Some(format!("The Pod \"a\\nb\" is invalid: metadata.name: Invalid value: \"a\\nb\": {SUBDOMAIN}")),
        ),
        ("dots are fine in a subdomain", obj("v1", "ConfigMap", "{name: a.b}", ""), None),
        (
            "a service name is a DNS-1035 label",
            obj("v1", "Service", "{name: 1web}", "spec: {ports: [{port: 80}]}\n"),
            Some(format!("The Service \"1web\" is invalid: metadata.name: Invalid value: \"1web\": {DNS1035}")),
        ),
        (
            "a namespace name is an RFC 1123 label",
            obj("v1", "Namespace", "{name: a.b}", ""),
            Some(format!("The Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": {LABEL}")),
        ),
        (
            "namespace of an object",
            obj("v1", "Pod", "{name: web, namespace: Team_A}", POD_SPEC),
            Some(format!("The Pod \"web\" is invalid: metadata.namespace: Invalid value: \"Team_A\": {LABEL}")),
        ),
        ("generateName ending in a dash", obj("v1", "Pod", "{generateName: web-}", POD_SPEC), None),
        ("unknown kinds are left to the server", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "{name: \"system:Odd\"}", ""), None),
        ("zero replicas", deploy("replicas: 0, "), None),
        (
            "negative replicas",
            deploy("replicas: -5, "),
            Some("The Deployment \"web\" is invalid: spec.replicas: Invalid value: -5: must be greater than or equal to 0".into()),
        ),
        (
            "negative job parallelism and completions",
            obj("batch/v1", "Job", "{name: j}", &format!("spec: {{parallelism: -1, completions: -2, template: {{{JOB_POD_SPEC}}}}}\n")),
            Some(
                "The Job \"j\" is invalid: \n* spec.parallelism: Invalid value: -1: must be greater than or equal to 0\n* spec.completions: Invalid value: -2: must be greater than or equal to 0"
                    .into(),
            ),
        ),
        (
            "a cronjob's job template",
            obj("batch/v1", "CronJob", "{name: c}", &format!("spec: {{schedule: '* * * * *', jobTemplate: {{spec: {{parallelism: -3, template: {{{JOB_POD_SPEC}}}}}}}}}\n")),
            Some("The CronJob \"c\" is invalid: spec.jobTemplate.spec.parallelism: Invalid value: -3: must be greater than or equal to 0".into()),
        ),
    ];
    let mut failures = Vec::new();
    for (what, yaml, want) in rows {
        let got = verdict(&yaml);
        if got != want {
            failures.push(format!("{what}:\n  got  {got:?}\n  want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn workload_templates_are_validated_before_quota() {
    use kubectl_quota_engine::object_validation::invalid_template_message;
    use kubectl_quota_engine::version::{KubeVersion, Rules};
    let pod = |extra: &str, labels: &str| format!("template: {{metadata: {{labels: {{{labels}}}}}, spec: {{{extra}containers: [{{name: a, image: b}}]}}}}");
    let apps = |kind: &str, extra: &str, labels: &str| {
        obj("apps/v1", kind, "{name: web}", &format!("spec: {{selector: {{matchLabels: {{app: web}}}}, {}}}\n", pod(extra, labels)))
    };
    let job = |extra: &str| obj("batch/v1", "Job", "{name: j}", &format!("spec: {{{}}}\n", pod(extra, "app: j")));
    let refused = |yaml: &str, version: &str| {
        let docs = parse_str("t.yaml", yaml).expect("test manifest parses");
        invalid_template_message(&decode(&docs[0]).expect("decodes"), &Rules::for_version(KubeVersion::parse(version).unwrap()), ServerFlags::default())
    };
    let rows: Vec<(&str, String, &str, Option<&str>)> = vec![
        ("labels the selector selects", apps("Deployment", "", "app: web, tier: x"), "1.37", None),
        (
            "a selector the template's labels do not match (1.37: the labels as JSON)",
            apps("Deployment", "", "app: other"),
            "1.37",
            Some("Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"),
        ),
        (
            "the same on 1.20: the labels as Go prints a map",
            apps("Deployment", "", "app: other"),
            "1.20",
            Some("Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`"),
        ),
        (
            "activeDeadlineSeconds in a DaemonSet's pods",
            apps("DaemonSet", "activeDeadlineSeconds: 30, ", "app: web"),
            "1.37",
            Some("DaemonSet.apps \"web\" is invalid: spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"),
        ),
        (
            "a Deployment's template is validated as a ReplicaSet's",
            apps("Deployment", "activeDeadlineSeconds: 30, ", "app: web"),
            "1.37",
            Some("Deployment.apps \"web\" is invalid: spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"),
        ),
        (
            "a Deployment's pods restart always",
            apps("Deployment", "restartPolicy: Never, ", "app: web"),
            "1.37",
            Some("Deployment.apps \"web\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""),
        ),
        (
            "a Job without a restart policy (defaulted to Always)",
            job(""),
            "1.37",
            Some("Job.batch \"j\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""),
        ),
        ("a Job whose pods never restart", job("restartPolicy: Never, "), "1.37", None),
        (
            "several at once, in brackets",
            apps("Deployment", "restartPolicy: OnFailure, ", "app: other"),
            "1.37",
            Some("Deployment.apps \"web\" is invalid: [spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`, spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"]"),
        ),
    ];
    for (what, yaml, version, want) in rows {
        assert_eq!(refused(&yaml, version).as_deref(), want, "{what}");
    }
}

/// The pod spec's resource rules refuse a workload at creation, at its template's path: the
/// server validates the template as it validates a pod (kubernetes 1.34-1.37
/// `validatePodResourceConsistency`, `ValidateContainerResourceRequirements`). A template is
/// validated as written: its containers' limits are not copied into their requests.
#[test]
fn templates_with_pod_level_resources_below_the_containers_refuse_the_workload() {
    use kubectl_quota_engine::object_validation::invalid_template_message;
    use kubectl_quota_engine::version::{KubeVersion, Rules};
    let spec = |restart: &str, pod: &str, containers: &str, init: &str| {
        format!("spec: {{{restart}resources: {pod}, initContainers: [{init}], containers: [{containers}]}}")
    };
    let c = |name: &str, resources: &str| format!("{{name: {name}, image: b, resources: {resources}}}");
    let two_300m = format!("{}, {}", c("a", "{requests: {cpu: 300m}}"), c("b", "{requests: {cpu: 300m}}"));
    let deployment = |pod_spec: String| {
        obj(
            "apps/v1",
            "Deployment",
            "{name: web}",
            &format!("spec: {{selector: {{matchLabels: {{app: web}}}}, template: {{metadata: {{labels: {{app: web}}}}, {pod_spec}}}}}\n"),
        )
    };
    let job = |pod_spec: String| obj("batch/v1", "Job", "{name: j}", &format!("spec: {{template: {{{pod_spec}}}}}\n"));
    let cronjob = |pod_spec: String| {
        obj("batch/v1", "CronJob", "{name: c}", &format!("spec: {{schedule: '* * * * *', jobTemplate: {{spec: {{template: {{{pod_spec}}}}}}}}}\n"))
    };
    let never = "restartPolicy: Never, ";
    let rows: Vec<(&str, String, &str, Option<String>)> = vec![
        (
            "a Deployment whose pod-level cpu is below its two containers' sum",
            deployment(spec("", "{requests: {cpu: 500m}}", &two_300m, "")),
            "1.37",
            Some("Deployment.apps \"web\" is invalid: spec.template.spec.resources.requests[cpu]: Invalid value: \"500m\": must be greater than or equal to aggregate container requests of 600m".into()),
        ),
        ("the same at the sum exactly", deployment(spec("", "{requests: {cpu: 600m}}", &two_300m, "")), "1.37", None),
        (
            "before 1.34 the server drops pod-level resources from templates: nothing to refuse",
            deployment(spec("", "{requests: {cpu: 500m}}", &two_300m, "")),
            "1.33",
            None,
        ),
        (
            "a Job: an init container larger than the containers' sum sets the aggregate",
            job(spec(never, "{requests: {memory: 1Gi}}", &c("a", "{requests: {memory: 512Mi}}"), &c("setup", "{requests: {memory: 2Gi}}"))),
            "1.37",
            Some("Job.batch \"j\" is invalid: spec.template.spec.resources.requests[memory]: Invalid value: \"1Gi\": must be greater than or equal to aggregate container requests of 2Gi".into()),
        ),
        (
            "a CronJob: a sidecar adds to the containers' sum, at the job template's path",
            cronjob(spec(never, "{requests: {cpu: 500m}}", &c("a", "{requests: {cpu: 300m}}"), "{name: log, image: b, restartPolicy: Always, resources: {requests: {cpu: 300m}}}")),
            "1.37",
            Some("CronJob.batch \"c\" is invalid: spec.jobTemplate.spec.template.spec.resources.requests[cpu]: Invalid value: \"500m\": must be greater than or equal to aggregate container requests of 600m".into()),
        ),
        (
            "a zero pod-level request is a request: any container request is above it",
            job(spec(never, "{requests: {cpu: '0'}}", &c("a", "{requests: {cpu: 100m}}"), "")),
            "1.37",
            Some("Job.batch \"j\" is invalid: spec.template.spec.resources.requests[cpu]: Invalid value: \"0\": must be greater than or equal to aggregate container requests of 100m".into()),
        ),
        (
            "a template's containers with limits only ask for nothing (no defaulting in templates)",
            deployment(spec("", "{requests: {cpu: 500m}, limits: {cpu: '2'}}", &c("a", "{limits: {cpu: '1'}}"), "")),
            "1.37",
            None,
        ),
        (
            "a container's limit above the pod-level limit, at the server's path",
            deployment(spec("", "{limits: {cpu: '1'}}", &c("a", "{limits: {cpu: '2'}}"), "")),
            "1.37",
            Some("Deployment.apps \"web\" is invalid: spec.template.spec.resources.containers[0][cpu].limits: Invalid value: \"2\": must be less than or equal to pod limits of 1".into()),
        ),
        (
            "a pod-level hugepages limit below the containers' aggregate limit",
            deployment(spec("", "{limits: {hugepages-2Mi: 2Mi}}", &c("a", "{limits: {hugepages-2Mi: 4Mi}, requests: {hugepages-2Mi: 4Mi}}"), "")),
            "1.37",
            Some("Deployment.apps \"web\" is invalid: [spec.template.spec.resources.limits[hugepages-2Mi]: Invalid value: \"2Mi\": must be greater than or equal to aggregate container limits of 4Mi, spec.template.spec.resources.containers[0][hugepages-2Mi].limits: Invalid value: \"4Mi\": must be less than or equal to pod limits of 2Mi]".into()),
        ),
        (
            "a template's container request above its limit (1.34+: the limit named)",
            deployment(spec("", "{}", &c("a", "{requests: {cpu: '2'}, limits: {cpu: '1'}}"), "")),
            "1.37",
            Some("Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1".into()),
        ),
    ];
    for (what, yaml, version, want) in rows {
        let docs = parse_str("t.yaml", &yaml).expect("test manifest parses");
        let got =
            invalid_template_message(&decode(&docs[0]).expect("decodes"), &Rules::for_version(KubeVersion::parse(version).unwrap()), ServerFlags::default());
        assert_eq!(got, want, "{what}");
    }
}

// PersistentVolumeClaimResize, between LimitRanger and quota (semantics.md §4.2).
fn pvc(class: &str, storage: &str, bound: bool) -> Object {
    let status = if bound { "status: {phase: Bound}\n" } else { "" };
    let text = format!(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: data}}\nspec: {{{class}resources: {{requests: {{storage: {storage}}}}}}}\n{status}"
    );
    decode(&parse_str("x.yaml", &text).unwrap()[0]).unwrap()
}

#[test]
fn resize_refused_unless_bound_and_the_class_allows_expansion() {
    const NO: Option<&str> = None;
    const FORBIDDEN: Option<&str> = Some("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize");
    let classes = |allow: bool| vec![StorageClassInfo { name: "fast".into(), is_default: false, created: None, allow_volume_expansion: allow }];
    let (allowing, refusing) = (classes(true), classes(false));
    let fast = "storageClassName: fast, ";
    // (what, stored, manifest, classes, refusal)
    let cases: Vec<(&str, Object, Object, Option<&[StorageClassInfo]>, Option<&str>)> = vec![
        ("grows, bound, the class allows", pvc(fast, "2Gi", true), pvc(fast, "4Gi", false), Some(&allowing), NO),
        ("grows, bound, the class does not allow", pvc(fast, "2Gi", true), pvc(fast, "4Gi", false), Some(&refusing), FORBIDDEN),
        ("grows, bound, no such class", pvc(fast, "2Gi", true), pvc(fast, "4Gi", false), Some(&[]), FORBIDDEN),
        ("grows, bound, no class at all", pvc("", "2Gi", true), pvc("", "4Gi", false), Some(&allowing), FORBIDDEN),
        (
            "grows, bound, an explicit empty class",
            pvc("storageClassName: '', ", "2Gi", true),
            pvc("storageClassName: '', ", "4Gi", false),
            Some(&allowing),
            FORBIDDEN,
        ),
        ("grows, the manifest names no class: the stored one", pvc(fast, "2Gi", true), pvc("", "4Gi", false), Some(&allowing), NO),
        ("grows, bound, the classes unknown", pvc(fast, "2Gi", true), pvc(fast, "4Gi", false), None, NO),
        ("grows, not bound", pvc(fast, "2Gi", false), pvc(fast, "4Gi", false), Some(&allowing), Some("Only bound persistent volume claims can be expanded")),
        ("the same size", pvc(fast, "2Gi", true), pvc(fast, "2048Mi", false), Some(&refusing), NO),
        ("shrinks", pvc(fast, "2Gi", true), pvc(fast, "1Gi", false), Some(&refusing), NO),
    ];
    for (what, old, new, classes, want) in cases {
        assert_eq!(resize_refusal(&old, &new, classes).as_deref(), want, "{what}");
    }
}
