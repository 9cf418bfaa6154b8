module labctl.dev/labs/helm-release/web

go 1.26
