//! Which quotas look at an object and why: each quota's scopes and selectors, the resources it
//! limits that the object consumes, and the errors the server raises while it examines them.

use super::*;

/// Per quota, what the first loop of CheckRequest found.
pub(super) struct Examined<'q> {
    pub(super) verdict: QuotaVerdict,
    /// The explanation so far (`None` with [`Detail::Refusals`]); boxed, so that the list of
    /// examined quotas stays small.
    pub(super) report: Option<Box<QuotaReport>>,
    /// The quota's resources this object is charged for, borrowed from the quota.
    pub(super) restricted: SmallVec<[&'q str; 8]>,
    pub(super) missing: BTreeMap<String, BTreeSet<String>>,
    pub(super) interesting: bool,
}

/// A quota's scopes against the object: every expression with its reason, or only whether
/// all of them select it.
pub(super) enum Scoped {
    Outcomes(Vec<ScopeOutcome>),
    Matched(bool),
}

impl Scoped {
    fn matched(&self) -> bool {
        match self {
            Scoped::Outcomes(o) => o.iter().all(|o| o.matched),
            Scoped::Matched(m) => *m,
        }
    }
}

/// The must-specify findings of one object for every resource a constraint can name,
/// computed once (on the first applying quota); each quota keeps the resources it restricts.
#[derive(Default)]
pub(super) struct Missing {
    all: Option<BTreeMap<String, BTreeSet<String>>>,
}

impl Missing {
    fn for_quota(&mut self, obj: &Object, ev: &Evaluator, restricted: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
        let all = self.all.get_or_insert_with(|| ev.constraints(obj, usage::constrained_resources()));
        if all.is_empty() {
            return BTreeMap::new();
        }
        restricted.iter().filter_map(|r| all.get(*r).map(|c| (r.to_string(), c.clone()))).collect()
    }
}

pub(super) fn examine<'q>(q: &'q NamedQuota, obj: &Object, ev: &Evaluator, scoped: Scoped, missing: &mut Missing) -> Examined<'q> {
    let scope_ok = scoped.matched();
    let outcomes = match scoped {
        Scoped::Outcomes(o) => Some(o),
        Scoped::Matched(_) => None,
    };
    let explain = outcomes.is_some();
    let mut ex = Examined { verdict: QuotaVerdict::NotApplicable, report: None, restricted: SmallVec::new(), missing: BTreeMap::new(), interesting: false };
    if !explain && (!scope_ok || !q.quota.has_status) {
        // Nothing to explain, and not a quota this object is charged to.
        return ex;
    }
    ex.restricted = ev.matching_resources(q.quota.status_hard.keys());
    let mut report = outcomes.map(|scopes| Box::new(QuotaReport { scopes, ..QuotaReport::blank(&q.name) }));
    let gr = || obj.type_info.group_resource();
    if !q.quota.has_status {
        ex.verdict = QuotaVerdict::NotEnforced;
        if let Some(r) = &mut report {
            r.why = "not enforced until the quota controller syncs it (the quota has no status.hard yet)".into();
        }
    } else if ex.restricted.is_empty() {
        if let Some(r) = &mut report {
            r.unrelated = true;
            let tracked: Vec<&str> = q.quota.status_hard.keys().map(String::as_str).collect();
            r.why = format!("limits nothing {} consume (hard: {})", gr(), if tracked.is_empty() { "none".to_string() } else { tracked.join(", ") });
        }
    } else if !scope_ok {
        if let Some(r) = &mut report {
            r.why = joined("", "; ", r.scopes.iter().filter(|o| !o.matched).map(|o| o.reason.as_str()));
        }
    } else {
        ex.interesting = true;
        ex.missing = missing.for_quota(obj, ev, &ex.restricted);
        ex.verdict = if !ex.missing.is_empty() {
            QuotaVerdict::MustSpecify
        } else if ex.restricted.iter().any(|r| !q.quota.status_used.contains_key(*r)) {
            QuotaVerdict::StatusUnknown
        } else {
            QuotaVerdict::Fits
        };
        if let Some(r) = &mut report {
            r.applies = true;
            r.why = if r.scopes.is_empty() {
                joined("applies: no scopes, and it limits ", ", ", ex.restricted.iter().copied())
            } else {
                joined("applies: ", "; ", r.scopes.iter().map(|o| o.reason.as_str()))
            };
            r.missing = listed(&ex.missing);
        }
    }
    if let Some(r) = &mut report {
        r.verdict = ex.verdict;
    }
    ex.report = report;
    ex
}

/// `prefix` and then `parts` separated by `sep`, in one string.
pub(super) fn joined<'a>(prefix: &str, sep: &str, parts: impl Iterator<Item = &'a str> + Clone) -> String {
    let len = parts.clone().map(|p| p.len() + sep.len()).sum::<usize>();
    let mut out = String::with_capacity(prefix.len() + len);
    out.push_str(prefix);
    for (i, p) in parts.enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(p);
    }
    out
}

/// What examining every quota in order found.
pub(super) struct Examination<'q> {
    pub(super) examined: SmallVec<[Examined<'q>; 24]>,
    /// Refusals of the first loop (scope errors, must-specify, unknown status), in quota order.
    pub(super) errors: Vec<Refusal>,
    /// The scopes some quota selects the object by (kept only when a scope is limited).
    pub(super) restricted_scopes: Vec<ScopeRequirement>,
    /// What some applying quota restricts (kept only when a resource name is limited).
    pub(super) restricted: BTreeSet<&'q str>,
}

/// CheckRequest's first loop: every quota, in order: scopes, match, constraints, usage stats.
pub(super) fn examine_all<'q>(quotas: &'q [NamedQuota], obj: &Object, ev: &Evaluator, limits: &Limits, detail: Detail, rules: &Rules) -> Examination<'q> {
    // Inline for the usual number of quotas: a list this size on the heap is a large
    // allocation, which makes the allocator consolidate its free lists on every object.
    let mut out = Examination { examined: SmallVec::with_capacity(quotas.len()), errors: vec![], restricted_scopes: vec![], restricted: BTreeSet::new() };
    let mut missing = Missing::default();
    let selecting = scopes::Selecting::new(ev, obj);
    for q in quotas {
        // Per-expression outcomes are needed to explain, and to know which limited scopes
        // some quota covers.
        let scoped = if detail == Detail::Refusals && limits.scopes.is_empty() {
            selecting.quota(&q.quota).map(Scoped::Matched)
        } else {
            let selectors = q.quota.selectors();
            selecting.explain(&selectors).map(|outcomes| {
                // Only a limited scope needs to know which scopes some quota covers.
                if !limits.scopes.is_empty() {
                    out.restricted_scopes.extend(selectors.iter().zip(&outcomes).filter(|(_, o)| o.matched).map(|(s, _)| s.clone()));
                }
                Scoped::Outcomes(outcomes)
            })
        };
        let scoped = match scoped {
            Ok(s) => s,
            Err(e) => {
                out.errors.push(refusal(RefusalReason::ScopeError, Some(&q.name), vec![], format!("error matching scopes of quota {}, err: {e}", q.name)));
                let report = (detail == Detail::Full).then(|| Box::new(QuotaReport { why: e, ..QuotaReport::blank(&q.name) }));
                out.examined.push(Examined {
                    verdict: QuotaVerdict::NotApplicable,
                    report,
                    restricted: SmallVec::new(),
                    missing: BTreeMap::new(),
                    interesting: false,
                });
                continue;
            }
        };
        let ex = examine(q, obj, ev, scoped, &mut missing);
        if ex.interesting {
            out.errors.extend(loop_error(q, &ex, rules));
            if !limits.names.is_empty() {
                out.restricted.extend(ex.restricted.iter().copied());
            }
        }
        out.examined.push(ex);
    }
    out
}

/// The refusal an applying quota's first-loop verdict makes: must-specify, or an unknown status.
pub(super) fn loop_error(q: &NamedQuota, ex: &Examined, rules: &Rules) -> Option<Refusal> {
    match ex.verdict {
        QuotaVerdict::MustSpecify => Some(refusal(
            RefusalReason::MustSpecify,
            Some(&q.name),
            ex.missing.keys().cloned().collect(),
            format!("failed quota: {}: {}", q.name, usage::must_specify_message_for(&ex.missing, rules)),
        )),
        QuotaVerdict::StatusUnknown => Some(refusal(
            RefusalReason::StatusUnknown,
            Some(&q.name),
            ex.restricted.iter().map(|r| r.to_string()).collect(),
            format!("status unknown for quota: {}, resources: {}", q.name, resources::pretty_print_names(&ex.restricted)),
        )),
        _ => None,
    }
}
