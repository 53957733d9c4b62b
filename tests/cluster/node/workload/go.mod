module kubectl-quota.test/lab/workload

go 1.26.0
