//! Label selectors (`matchLabels` and `matchExpressions`), as the API server matches them:
//! webhooks' namespace and object selectors, and `describe -l`.

use std::collections::BTreeMap;

/// A label selector as the API has it (`matchLabels` and `matchExpressions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
    /// (key, operator, values): `In`, `NotIn`, `Exists`, `DoesNotExist`.
    pub match_expressions: Vec<(String, String, Vec<String>)>,
}

impl LabelSelector {
    /// Whether `labels` are selected, as the API server's label matching has it: every
    /// `matchLabels` pair and every expression must hold (an empty selector selects all); an
    /// operator the API does not know selects nothing.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|(k, op, values)| match op.as_str() {
                "In" => labels.get(k).is_some_and(|v| values.contains(v)),
                "NotIn" => labels.get(k).is_none_or(|v| !values.contains(v)),
                "Exists" => labels.contains_key(k),
                "DoesNotExist" => !labels.contains_key(k),
                _ => false,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_match_as_the_api_server_matches_labels() {
        let labels: BTreeMap<String, String> = [("istio-injection".to_string(), "enabled".to_string()), ("team".to_string(), "a".to_string())].into();
        let sel = |ml: &[(&str, &str)], me: &[(&str, &str, &[&str])]| LabelSelector {
            match_labels: ml.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            match_expressions: me.iter().map(|(k, o, v)| (k.to_string(), o.to_string(), v.iter().map(|s| s.to_string()).collect())).collect(),
        };
        let cases: [(&str, LabelSelector, bool); 8] = [
            ("empty selects all", sel(&[], &[]), true),
            ("matchLabels equal", sel(&[("istio-injection", "enabled")], &[]), true),
            ("matchLabels differ", sel(&[("istio-injection", "disabled")], &[]), false),
            ("In", sel(&[], &[("team", "In", &["a", "b"])]), true),
            ("NotIn on a missing key holds", sel(&[], &[("env", "NotIn", &["prod"])]), true),
            ("Exists", sel(&[], &[("team", "Exists", &[])]), true),
            ("DoesNotExist", sel(&[], &[("team", "DoesNotExist", &[])]), false),
            ("an unknown operator selects nothing", sel(&[], &[("team", "Gt", &["1"])]), false),
        ];
        for (what, s, want) in cases {
            assert_eq!(s.matches(&labels), want, "{what}");
        }
    }
}
