module labctl.test/workload-web

go 1.22
