//! How a MutatingAdmissionPolicy's result changes the object: an ApplyConfiguration merged
//! as server-side apply merges it (maps field by field, lists of keyed items item by item,
//! other lists replaced), and a JSONPatch applied as RFC 6902 says.

use serde_json::{Map, Value};

/// The keys of a pod's keyed lists (their `x-kubernetes-list-map-keys`), by the list's field
/// name; a list not named here is atomic: an applied one replaces it whole.
fn list_keys(field: &str) -> Option<&'static [&'static str]> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims"
        | "claims"
        | "readinessGates"
        | "schedulingGates"
        | "hostAliases" => match field {
            "readinessGates" => &["conditionType"],
            "hostAliases" => &["ip"],
            _ => &["name"],
        },
        "ports" => &["containerPort", "protocol"],
        "volumeMounts" => &["mountPath"],
        "volumeDevices" => &["devicePath"],
        "resizePolicy" => &["resourceName"],
        "topologySpreadConstraints" => &["topologyKey", "whenUnsatisfiable"],
        _ => return None,
    })
}

/// The default of a list-map key when an item leaves it out (a port's protocol is TCP).
fn key_of(item: &Value, keys: &[&str]) -> Vec<Value> {
    keys.iter()
        .map(|k| match (item.get(*k), *k) {
            (Some(v), _) => v.clone(),
            (None, "protocol") => Value::String("TCP".into()),
            (None, _) => Value::Null,
        })
        .collect()
}

/// Merges `applied` into `target`, as server-side apply merges an apply configuration into the
/// live object for a manager that owned nothing before: every field it sets is set, maps and
/// structs are merged, keyed lists merged by key (new items appended), other lists replaced.
///
/// An apply configuration holding two items of one keyed list with the same key is refused,
/// as the server's typed conversion refuses it, and `target` is left as it was (the live
/// object may hold such twins: it is converted allowing them). A policy that appends a
/// sidecar by JSON patch under `reinvocationPolicy: IfNeeded` makes twins on the second run;
/// an ApplyConfiguration built from `object.spec.containers` then carries them.
pub fn apply(target: &mut Value, applied: &Value) -> Result<(), String> {
    let mut twins = Vec::new();
    find_twins(applied, "", "", &mut twins);
    match twins.len() {
        0 => {
            apply_field(target, applied, "");
            Ok(())
        }
        1 => Err(format!("error applying patch: failed to convert patch object to typed object: {}", twins.remove(0))),
        _ => Err(format!("error applying patch: failed to convert patch object to typed object: errors:\n  {}", twins.join("\n  "))),
    }
}

/// Each keyed list under `v` (at `path`, `v` being the value of `field`) holding two items
/// with one key, in the typed converter's words: `.spec.containers: duplicate entries for key
/// [name="c9"]`.
fn find_twins(v: &Value, field: &str, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                find_twins(child, k, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => {
            let keys = list_keys(field);
            let mut seen = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let element = match keys {
                    Some(keys) => key_element(item, keys),
                    None => format!("[{i}]"),
                };
                if keys.is_some() {
                    if seen.contains(&element) {
                        out.push(format!("{path}: duplicate entries for key {element}"));
                    }
                    seen.push(element.clone());
                }
                find_twins(item, "", &format!("{path}{element}"), out);
            }
        }
        _ => {}
    }
}

/// A keyed list item's place as the typed converter names it: its keys by name, strings
/// quoted (`[containerPort=80,protocol="TCP"]`).
fn key_element(item: &Value, keys: &[&str]) -> String {
    let mut named: Vec<(&str, Value)> = keys.iter().copied().zip(key_of(item, keys)).collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> = named.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("[{}]", parts.join(","))
}

fn apply_field(target: &mut Value, applied: &Value, field: &str) {
    match (target, applied) {
        (Value::Object(t), Value::Object(a)) => merge_maps(t, a),
        (Value::Array(t), Value::Array(a)) if list_keys(field).is_some() => {
            let keys = list_keys(field).unwrap_or_default();
            for item in a {
                let k = key_of(item, keys);
                let at: Vec<usize> = t.iter().enumerate().filter(|(_, x)| key_of(x, keys) == k).map(|(i, _)| i).collect();
                match at.as_slice() {
                    [] => t.push(item.clone()),
                    [i] => apply_field(&mut t[*i], item, ""),
                    // Twins in the live object are not merged with: the applied item takes
                    // the place of the first, the others go.
                    [first, rest @ ..] => {
                        t[*first] = item.clone();
                        for i in rest.iter().rev() {
                            t.remove(*i);
                        }
                    }
                }
            }
        }
        (t, a) => *t = a.clone(),
    }
}

fn merge_maps(t: &mut Map<String, Value>, a: &Map<String, Value>) {
    for (k, v) in a {
        match t.get_mut(k) {
            Some(existing) if !existing.is_null() => apply_field(existing, v, k),
            _ => {
                t.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Applies a JSON patch (a list of `{op, path, value, from}`) to `target`, every operation or
/// none: an error leaves `target` as it was and says which operation failed. A `test` that
/// does not hold is no error: as the server does, the patch is then not applied at all.
pub fn json_patch(target: &mut Value, ops: &Value) -> Result<(), String> {
    let Some(ops) = ops.as_array() else { return Err(format!("JSONPatch must be a list, got {ops}")) };
    let mut doc = target.clone();
    for op in ops {
        let s = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or_default();
        let (name, path) = (s("op"), s("path"));
        let value = || op.get("value").cloned().ok_or_else(|| format!("{name} operation: value is required"));
        let r = match name {
            "add" => value().and_then(|v| add(&mut doc, path, v, name)),
            "remove" => remove(&mut doc, path, name).map(|_| ()),
            // A missing key of an object that exists is set; a missing object is an error.
            "replace" => value().and_then(|v| replace(&mut doc, path, v)),
            "move" => remove(&mut doc, s("from"), name).and_then(|v| add(&mut doc, path, v, name)),
            "copy" => get(&doc, s("from")).cloned().ok_or_else(|| missing(name, s("from"))).and_then(|v| add(&mut doc, path, v, name)),
            // A test that fails leaves the object as it was, and is no error.
            "test" => match (get(&doc, path), value()) {
                (Some(have), Ok(want)) if *have == want => Ok(()),
                (_, Err(e)) => Err(e),
                _ => return Ok(()),
            },
            other => Err(format!("unexpected operation {other:?}")),
        };
        r.map_err(|e| format!("JSON Patch: {e}"))?;
    }
    *target = doc;
    Ok(())
}

/// The JSON patch library's words for a path that is not there.
fn missing(op: &str, path: &str) -> String {
    format!("{op} operation does not apply: doc is missing path: {path}: missing value")
}

/// A JSON pointer's tokens (RFC 6901 escapes undone).
fn tokens(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(vec![]);
    }
    let Some(rest) = path.strip_prefix('/') else { return Err(format!("path {path:?} must start with /")) };
    Ok(rest.split('/').map(|t| t.replace("~1", "/").replace("~0", "~")).collect())
}

fn get<'v>(doc: &'v Value, path: &str) -> Option<&'v Value> {
    let mut cur = doc;
    for t in tokens(path).ok()? {
        cur = match cur {
            Value::Object(m) => m.get(&t)?,
            Value::Array(a) => a.get(t.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// The parent container of `path` and the last token.
fn parent<'v>(doc: &'v mut Value, path: &str, op: &str) -> Result<(&'v mut Value, String), String> {
    let mut t = tokens(path)?;
    let Some(last) = t.pop() else { return Err(missing(op, path)) };
    let mut cur = doc;
    for tok in &t {
        cur = match cur {
            Value::Object(m) => m.get_mut(tok),
            Value::Array(a) => tok.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| missing(op, path))?;
    }
    Ok((cur, last))
}

fn add(doc: &mut Value, path: &str, v: Value, op: &str) -> Result<(), String> {
    if path.is_empty() {
        *doc = v;
        return Ok(());
    }
    let (p, last) = parent(doc, path, op)?;
    match p {
        Value::Object(m) => {
            m.insert(last, v);
            Ok(())
        }
        Value::Array(a) if last == "-" => {
            a.push(v);
            Ok(())
        }
        Value::Array(a) => match last.parse::<usize>() {
            Ok(i) if i <= a.len() => {
                a.insert(i, v);
                Ok(())
            }
            _ => Err(missing(op, path)),
        },
        _ => Err(missing(op, path)),
    }
}

fn replace(doc: &mut Value, path: &str, v: Value) -> Result<(), String> {
    let (p, last) = parent(doc, path, "replace")?;
    match p {
        Value::Object(m) => {
            m.insert(last, v);
            Ok(())
        }
        Value::Array(a) => match last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
            Some(slot) => {
                *slot = v;
                Ok(())
            }
            None => Err(missing("replace", path)),
        },
        _ => Err(missing("replace", path)),
    }
}

fn remove(doc: &mut Value, path: &str, op: &str) -> Result<Value, String> {
    let (p, last) = parent(doc, path, op)?;
    match p {
        Value::Object(m) => m.remove(&last),
        Value::Array(a) => last.parse::<usize>().ok().filter(|i| *i < a.len()).map(|i| a.remove(i)),
        _ => None,
    }
    .ok_or_else(|| missing(op, path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn apply_merges_containers_by_name_and_replaces_atomic_lists() {
        let cases = [
            (
                "a request added to the named container",
                json!({"spec": {"containers": [{"name": "app", "image": "x", "args": ["a"]}, {"name": "b"}]}}),
                json!({"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "400m"}}}]}}),
                json!({"spec": {"containers": [{"name": "app", "image": "x", "args": ["a"], "resources": {"requests": {"cpu": "400m"}}}, {"name": "b"}]}}),
            ),
            (
                "a new container appended",
                json!({"spec": {"containers": [{"name": "app"}]}}),
                json!({"spec": {"containers": [{"name": "side", "image": "s"}]}}),
                json!({"spec": {"containers": [{"name": "app"}, {"name": "side", "image": "s"}]}}),
            ),
            (
                "an atomic list replaced",
                json!({"spec": {"containers": [{"name": "app", "args": ["a", "b"]}]}}),
                json!({"spec": {"containers": [{"name": "app", "args": ["c"]}]}}),
                json!({"spec": {"containers": [{"name": "app", "args": ["c"]}]}}),
            ),
            (
                "twins in the live object replaced by the applied item, not merged with",
                json!({"spec": {"containers": [{"name": "c0", "image": "x", "args": ["a"]}, {"name": "b"}, {"name": "c0", "image": "y"}]}}),
                json!({"spec": {"containers": [{"name": "c0", "resources": {"limits": {"memory": "128Mi"}}}]}}),
                json!({"spec": {"containers": [{"name": "c0", "resources": {"limits": {"memory": "128Mi"}}}, {"name": "b"}]}}),
            ),
            (
                "ports keyed by port and protocol (TCP by default)",
                json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http"}]}]}}),
                json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP", "hostPort": 8080}]}]}}),
                json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP", "hostPort": 8080}]}]}}),
            ),
        ];
        for (what, mut target, applied, want) in cases {
            apply(&mut target, &applied).unwrap();
            assert_eq!(target, want, "{what}");
        }
    }

    #[test]
    fn an_apply_configuration_with_two_items_of_one_key_is_refused_as_the_typed_converter_refuses_it() {
        let cases = [
            (
                "two containers named alike",
                json!({"spec": {"containers": [{"name": "c9"}, {"name": "app"}, {"name": "c9"}]}}),
                Err(r#"error applying patch: failed to convert patch object to typed object: .spec.containers: duplicate entries for key [name="c9"]"#.to_string()),
            ),
            (
                "two ports of one container, the protocol defaulted",
                json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}]}]}}),
                Err(r#"error applying patch: failed to convert patch object to typed object: .spec.containers[name="a"].ports: duplicate entries for key [containerPort=80,protocol="TCP"]"#.to_string()),
            ),
            ("an atomic list may repeat itself", json!({"spec": {"containers": [{"name": "a", "args": ["x", "x"]}]}}), Ok(())),
        ];
        for (what, applied, want) in cases {
            let mut target = json!({"spec": {"containers": [{"name": "c9"}, {"name": "c9"}]}});
            let before = target.clone();
            assert_eq!(apply(&mut target, &applied), want, "{what}");
            if want.is_err() {
                assert_eq!(target, before, "{what}: the object is left as it was");
            }
        }
    }

    #[test]
    fn a_missing_path_is_said_in_the_json_patch_librarys_words() {
        let mut doc = json!({"spec": {"containers": [{"name": "app"}]}});
        let r = json_patch(&mut doc, &json!([{"op": "replace", "path": "/spec/containers/0/resources/requests/cpu", "value": "1"}]));
        assert_eq!(
            r,
            Err("JSON Patch: replace operation does not apply: doc is missing path: /spec/containers/0/resources/requests/cpu: missing value".into())
        );
    }

    #[test]
    fn json_patch_applies_every_operation_or_none() {
        let base = json!({"spec": {"containers": [{"name": "app"}]}, "metadata": {"labels": {"a/b": "1"}}});
        let cases = [
            (
                "append",
                json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "side"}}]),
                Ok(json!({"spec": {"containers": [{"name": "app"}, {"name": "side"}]}, "metadata": {"labels": {"a/b": "1"}}})),
            ),
            (
                "an escaped key replaced",
                json!([{"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"}]),
                Ok(json!({"spec": {"containers": [{"name": "app"}]}, "metadata": {"labels": {"a/b": "2"}}})),
            ),
            (
                "a failed test changes nothing, and is no error",
                json!([{"op": "remove", "path": "/metadata"}, {"op": "test", "path": "/spec", "value": 1}]),
                Ok(base.clone()),
            ),
            ("a missing path", json!([{"op": "remove", "path": "/spec/volumes"}]), Err(())),
            (
                "a missing key of an object that exists is replaced",
                json!([{"op": "replace", "path": "/metadata/labels/c", "value": "3"}]),
                Ok(json!({"spec": {"containers": [{"name": "app"}]}, "metadata": {"labels": {"a/b": "1", "c": "3"}}})),
            ),
            ("a replace under a missing object", json!([{"op": "replace", "path": "/spec/containers/0/resources/requests/cpu", "value": "1"}]), Err(())),
        ];
        for (what, ops, want) in cases {
            let mut doc = base.clone();
            let r = json_patch(&mut doc, &ops);
            match want {
                Ok(w) => assert_eq!((r, doc), (Ok(()), w), "{what}"),
                Err(()) => assert_eq!((r.is_err(), doc), (true, base.clone()), "{what}"),
            }
        }
    }
}
