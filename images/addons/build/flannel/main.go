// Command flanneld routes Pod traffic between a lab's nodes with flannel's
// own kube subnet manager and host-gw backend (one route per node, over
// the nodes' shared network), as a library, the way distributions that
// embed flannel do; flannel's command itself links every cloud backend,
// some of whose modules are not served here. It also writes the node's CNI
// configuration for its lease (the bridge plugin on the node's Pod CIDR,
// no masquerading inside the cluster's network: flannel's rules do that
// for traffic that leaves it), the part flannel's CNI plugin plays
// elsewhere.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/flannel-io/flannel/pkg/backend"
	_ "github.com/flannel-io/flannel/pkg/backend/hostgw"
	"github.com/flannel-io/flannel/pkg/ip"
	"github.com/flannel-io/flannel/pkg/ipmatch"
	"github.com/flannel-io/flannel/pkg/subnet/kube"
	"github.com/flannel-io/flannel/pkg/trafficmngr/iptables"
	"k8s.io/klog/v2"
)

func main() {
	netConf := flag.String("net-config", "/etc/kube-flannel/net-conf.json", "the network's configuration (Network, Backend)")
	cniConf := flag.String("cni-config", "/etc/cni/net.d/10-labctl.conflist", "the node's CNI configuration to write")
	resync := flag.Int("resync-seconds", 5, "how often the masquerade and forward rules are checked")
	ready := flag.String("ready-file", "/tmp/ready", "written once the node's CNI configuration is (the readiness probe's)")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *netConf, *cniConf, *ready, *resync); err != nil {
		klog.Errorf("flanneld: %v", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, netConf, cniConf, ready string, resync int) error {
	sm, err := kube.NewSubnetManager(ctx, "", "", "flannel.alpha.coreos.com", netConf, false)
	if err != nil {
		return fmt.Errorf("starting the kube subnet manager: %w", err)
	}
	config, err := sm.GetNetworkConfig(ctx)
	if err != nil {
		return fmt.Errorf("reading the network configuration: %w", err)
	}
	stack, err := ipmatch.GetIPFamily(config.EnableIPv4, config.EnableIPv6)
	if err != nil {
		return err
	}
	// The interface of the node's default route: the kind network.
	iface, err := ipmatch.LookupExtIface("", "", "", stack, ipmatch.PublicIPOpts{})
	if err != nil {
		return fmt.Errorf("finding the node's interface: %w", err)
	}
	be, err := backend.NewManager(ctx, sm, iface).GetBackend(config.BackendType)
	if err != nil {
		return fmt.Errorf("backend %s: %w", config.BackendType, err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	network, err := be.RegisterNetwork(ctx, &wg, config)
	if err != nil {
		return fmt.Errorf("registering the network: %w", err)
	}
	lease := network.Lease()
	rules := &iptables.IPTablesManager{}
	if err := rules.Init(ctx); err != nil {
		return err
	}
	if err := rules.SetupAndEnsureMasqRules(ctx, config.Network, ip.IP4Net{}, ip.IP4Net{},
		ip.IP6Net{}, ip.IP6Net{}, ip.IP6Net{}, lease, resync, false); err != nil {
		return fmt.Errorf("masquerade rules: %w", err)
	}
	rules.SetupAndEnsureForwardRules(ctx, config.Network, ip.IP6Net{}, resync)
	if err := writeCNIConfig(cniConf, lease.Subnet, network.MTU()); err != nil {
		return err
	}
	klog.Infof("node subnet %s; CNI configuration written to %s", lease.Subnet, cniConf)
	if err := os.WriteFile(ready, []byte(lease.Subnet.String()+"\n"), 0o644); err != nil {
		return err
	}
	network.Run(ctx)
	return nil
}

// writeCNIConfig replaces path, atomically, with the bridge configuration
// for the node's subnet.
func writeCNIConfig(path string, sub ip.IP4Net, mtu int) error {
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "labctl",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
				"hairpinMode": true, "mtu": mtu,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": [][]map[string]string{{{"subnet": sub.String()}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".labctl-*.tmp")
	if err != nil {
		return fmt.Errorf("writing the CNI configuration: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the CNI configuration: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the CNI configuration: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
