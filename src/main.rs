//! `kubectl-quota`: the program is [`kubectl_quota::app`]; this file only starts it.

fn main() -> std::process::ExitCode {
    kubectl_quota::app::main()
}
