// Command labctl-ingress is the ingress add-on: it serves the Ingresses of
// its IngressClass and the HTTPRoutes attached to Gateways of its
// GatewayClass, on the node's own ports, by proxying each request to the
// cluster address of the Service a rule names. It installs the Gateway
// API's standard CRDs (shipped beside it in the image) and its
// GatewayClass, and writes the status kubectl shows: an Ingress's and a
// Gateway's address, a Gateway's listeners, an HTTPRoute's parents.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
)

func main() {
	var o options
	flag.StringVar(&o.ingressClass, "ingress-class", "labctl", "the IngressClass served")
	flag.StringVar(&o.gatewayClass, "gateway-class", "labctl", "the GatewayClass made and served")
	flag.StringVar(&o.controller, "controller", "labctl.dev/ingress", "the IngressClass and GatewayClass controller name")
	flag.StringVar(&o.crds, "crds", "/usr/local/share/labctl-ingress/crds", "the Gateway API CRDs to install")
	flag.StringVar(&o.health, "health", ":10254", "where /healthz answers once the routes are built")
	flag.Parse()
	o.nodeIP = os.Getenv("NODE_IP")
	log.SetFlags(0)
	log.SetPrefix("labctl-ingress: ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

type options struct {
	ingressClass, gatewayClass, controller, crds, health, nodeIP string
}

type controller struct {
	o     options
	cs    kubernetes.Interface
	gw    gwclient.Interface
	kinf  informers.SharedInformerFactory
	ginf  gwinformers.SharedInformerFactory
	wake  chan struct{}
	ready chan struct{}

	mu        sync.Mutex
	servers   map[int]*portServer
	transport http.RoundTripper
}

// portServer is one listening port and the table it serves.
type portServer struct {
	mu    sync.RWMutex
	table http.Handler
}

func (p *portServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.RLock()
	t := p.table
	p.mu.RUnlock()
	t.ServeHTTP(w, r)
}

func run(ctx context.Context, o options) error {
	if o.nodeIP == "" {
		return errors.New("NODE_IP is not set (the Pod's status.hostIP)")
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, dyn, o.crds); err != nil {
		return err
	}
	gw, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := ensureGatewayClass(ctx, gw, o); err != nil {
		return err
	}
	c := &controller{
		o: o, cs: cs, gw: gw,
		kinf:    informers.NewSharedInformerFactory(cs, 10*time.Minute),
		ginf:    gwinformers.NewSharedInformerFactory(gw, 10*time.Minute),
		wake:    make(chan struct{}, 1),
		ready:   make(chan struct{}),
		servers: map[int]*portServer{},
		transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, Control: refuseNodeLocal}).DialContext,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       60 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second,
		},
	}
	go c.serveHealth(ctx)
	return c.loop(ctx)
}

func (c *controller) serveHealth(ctx context.Context) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-c.ready:
			fmt.Fprintln(w, "ok")
		default:
			http.Error(w, "building routes", http.StatusServiceUnavailable)
		}
	})
	srv := &http.Server{Addr: c.o.health, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Printf("health endpoint: %v", err)
	}
}

func (c *controller) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *controller) loop(ctx context.Context) error {
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.poke() },
		UpdateFunc: func(any, any) { c.poke() },
		DeleteFunc: func(any) { c.poke() },
	}
	ing := c.kinf.Networking().V1().Ingresses()
	cls := c.kinf.Networking().V1().IngressClasses()
	svc := c.kinf.Core().V1().Services()
	nss := c.kinf.Core().V1().Namespaces()
	gcs := c.ginf.Gateway().V1().GatewayClasses()
	gws := c.ginf.Gateway().V1().Gateways()
	hrs := c.ginf.Gateway().V1().HTTPRoutes()
	rgs := c.ginf.Gateway().V1beta1().ReferenceGrants()
	for _, inf := range []cache.SharedIndexInformer{ing.Informer(), cls.Informer(), svc.Informer(), nss.Informer(),
		gcs.Informer(), gws.Informer(), hrs.Informer(), rgs.Informer()} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	c.kinf.Start(ctx.Done())
	c.ginf.Start(ctx.Done())
	for typ, ok := range c.kinf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("reading %v did not sync", typ)
		}
	}
	for typ, ok := range c.ginf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("reading %v did not sync", typ)
		}
	}
	unbound := map[int]string{}
	for {
		w := &world{
			ingressClass:   c.o.ingressClass,
			controllerName: c.o.controller,
			nodeIP:         c.o.nodeIP,
			services:       map[string]*corev1.Service{},
			namespaces:     map[string]*corev1.Namespace{},
			unbound:        unbound,
		}
		if ic, err := cls.Lister().Get(c.o.ingressClass); err == nil {
			w.defaultClass = ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" && ic.Spec.Controller == c.o.controller
		}
		w.ingresses, _ = ing.Lister().List(labels.Everything())
		list, _ := svc.Lister().List(labels.Everything())
		for _, s := range list {
			w.services[key(s.Namespace, s.Name)] = s
		}
		nsl, _ := nss.Lister().List(labels.Everything())
		for _, n := range nsl {
			w.namespaces[n.Name] = n
		}
		w.gatewayClasses, _ = gcs.Lister().List(labels.Everything())
		w.gateways, _ = gws.Lister().List(labels.Everything())
		w.routes, _ = hrs.Lister().List(labels.Everything())
		w.grants, _ = rgs.Lister().List(labels.Everything())

		res := w.build()
		unbound = c.serve(ctx, res.ports)
		if len(unbound) != len(w.unbound) {
			// A port that failed (or came back) changes the statuses.
			c.poke()
		}
		c.writeStatus(ctx, w, res)
		select {
		case <-c.ready:
		default:
			close(c.ready)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.wake:
			// Let a burst of changes (an apply of many objects) settle.
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// serve opens a listener for every port with routes (and the Ingress
// port always), gives each its new table, and closes ports no longer
// used. It returns the ports that could not be opened, with why.
func (c *controller) serve(ctx context.Context, ports map[int][]*route) map[int]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := ports[ingressPort]; !ok {
		ports[ingressPort] = nil
	}
	unbound := map[int]string{}
	for port, routes := range ports {
		t := newTable(routes, c.transport)
		if ps, ok := c.servers[port]; ok {
			ps.mu.Lock()
			ps.table = t
			ps.mu.Unlock()
			continue
		}
		if port < 1 || port > 65535 {
			unbound[port] = "not a port"
			continue
		}
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			unbound[port] = fmt.Sprintf("port %d cannot be opened on the node: %v", port, err)
			continue
		}
		ps := &portServer{table: t}
		srv := &http.Server{Handler: ps, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			<-ctx.Done()
			srv.Close()
		}()
		go srv.Serve(ln)
		c.servers[port] = ps
	}
	// Unused ports keep listening and answer 404: closing and reopening a
	// port as routes come and go would race with the statuses.
	for port, ps := range c.servers {
		if _, ok := ports[port]; !ok {
			ps.mu.Lock()
			ps.table = newTable(nil, c.transport)
			ps.mu.Unlock()
		}
	}
	return unbound
}

// refuseNodeLocal keeps a backend (an ExternalName Service naming
// localhost, say) from reaching what listens on the node's loopback: the
// controller runs on the node's network.
func refuseNodeLocal(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() {
		return fmt.Errorf("backend address %s is the node's own: refused", host)
	}
	return nil
}

func ensureGatewayClass(ctx context.Context, gw gwclient.Interface, o options) error {
	gc := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: o.gatewayClass, Labels: map[string]string{"app.kubernetes.io/part-of": "labctl-addons"}},
		Spec: gatewayv1.GatewayClassSpec{
			ControllerName: gatewayv1.GatewayController(o.controller),
			Description:    ptr("served by labctl-ingress on the control-plane node's ports"),
		},
	}
	_, err := gw.GatewayV1().GatewayClasses().Create(ctx, gc, metav1.CreateOptions{})
	if err != nil && !isAlreadyExists(err) {
		return fmt.Errorf("creating GatewayClass %s: %w", o.gatewayClass, err)
	}
	return nil
}
