module labctl.dev/labs/netpol-shop/shop

go 1.22
