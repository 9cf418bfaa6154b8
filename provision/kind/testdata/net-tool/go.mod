module labctl.test/net-tool

go 1.22
