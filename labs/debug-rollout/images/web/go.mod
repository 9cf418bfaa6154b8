module labctl.dev/labs/debug-rollout/web

go 1.26
