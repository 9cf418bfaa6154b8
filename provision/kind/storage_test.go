package kind

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The storage add-on's manifest renders to objects that run the provisioner
// from the add-on image only, and make its class the cluster's default.
func TestStorageAddonManifest(t *testing.T) {
	const image = "labctl/addons:test"
	const namespace = "labctl-system"

	// The add-ons' namespace is its own manifest, applied first.
	nsText, err := os.ReadFile("addons/namespace.yaml")
	if err != nil {
		t.Fatal(err)
	}
	storageText, err := os.ReadFile("addons/storage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(nsText) + "---\n" + string(storageText)
	tmpl, err := template.New("storage.yaml").Option("missingkey=error").Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, struct{ Image, Namespace string }{image, namespace}); err != nil {
		t.Fatal(err)
	}
	rendered := out.String()
	if strings.Contains(rendered, ":latest") {
		t.Error("manifest names a :latest image")
	}

	byKind := map[string]*unstructured.Unstructured{}
	for i, doc := range strings.Split(rendered, "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		if m == nil {
			t.Fatalf("document %d is empty", i)
		}
		obj := &unstructured.Unstructured{Object: m}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			t.Fatalf("document %d lacks apiVersion, kind or metadata.name:\n%s", i, doc)
		}
		id := obj.GetKind() + "/" + obj.GetName()
		if obj.GetLabels()["app.kubernetes.io/part-of"] != "labctl-addons" {
			t.Errorf("%s lacks the label app.kubernetes.io/part-of=labctl-addons", id)
		}
		switch obj.GetKind() {
		case "Namespace", "ClusterRole", "ClusterRoleBinding", "StorageClass":
		default:
			if obj.GetNamespace() != namespace {
				t.Errorf("%s is in namespace %q, want %q", id, obj.GetNamespace(), namespace)
			}
		}
		for _, img := range manifestImages(m) {
			if img != image {
				t.Errorf("%s uses image %q, want %q", id, img, image)
			}
		}
		if byKind[obj.GetKind()] != nil {
			t.Fatalf("two objects of kind %s", obj.GetKind())
		}
		byKind[obj.GetKind()] = obj
	}
	for _, kind := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
		"Role", "RoleBinding", "ConfigMap", "Deployment", "StorageClass"} {
		if byKind[kind] == nil {
			t.Fatalf("no %s in the manifest", kind)
		}
	}

	ns := byKind["Namespace"]
	if ns.GetName() != namespace {
		t.Errorf("Namespace is %q, want %q", ns.GetName(), namespace)
	}
	if got := ns.GetLabels()["pod-security.kubernetes.io/enforce"]; got != "privileged" {
		t.Errorf("Namespace enforces pod security %q, want privileged", got)
	}

	// The provisioner's container.
	dep := byKind["Deployment"]
	// sigs.k8s.io/yaml decodes numbers into float64.
	if n, _, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "replicas"); n != float64(1) {
		t.Errorf("Deployment has %v replicas, want 1", n)
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(containers))
	}
	c := containers[0].(map[string]any)
	checkNeverPulled(t, "Deployment", c, image)
	if cmd, _, _ := unstructured.NestedStringSlice(c, "command"); len(cmd) != 1 || cmd[0] != "/usr/local/bin/local-path-provisioner" {
		t.Errorf("Deployment command = %q", cmd)
	}
	args, _, _ := unstructured.NestedStringSlice(c, "args")
	if len(args) == 0 || args[0] != "start" {
		t.Fatalf("Deployment args = %q, want the start command first", args)
	}
	flags := map[string]string{}
	for _, a := range args[1:] {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		flags[name] = value
	}
	if flags["helper-image"] != image {
		t.Errorf("--helper-image = %q, want %q", flags["helper-image"], image)
	}
	sa, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "spec", "serviceAccountName")
	// Helper pods run as the account and mount the ConfigMap the flags name.
	if sa != byKind["ServiceAccount"].GetName() || flags["service-account-name"] != sa {
		t.Errorf("service account: pod uses %q, flag names %q, manifest has %q",
			sa, flags["service-account-name"], byKind["ServiceAccount"].GetName())
	}
	if flags["configmap-name"] != byKind["ConfigMap"].GetName() {
		t.Errorf("--configmap-name = %q, ConfigMap is %q", flags["configmap-name"], byKind["ConfigMap"].GetName())
	}
	if flags["provisioner-name"] != "rancher.io/local-path" {
		t.Errorf("--provisioner-name = %q", flags["provisioner-name"])
	}
	tolerations, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "tolerations")
	tolerated := false
	for _, tol := range tolerations {
		if tol.(map[string]any)["key"] == "node-role.kubernetes.io/control-plane" {
			tolerated = true
		}
	}
	if !tolerated {
		t.Error("Deployment does not tolerate the control-plane taint")
	}

	// The helper pod the provisioner creates from the ConfigMap.
	data, _, _ := unstructured.NestedStringMap(byKind["ConfigMap"].Object, "data")
	for _, key := range []string{"config.json", "setup", "teardown", "helperPod.yaml"} {
		if data[key] == "" {
			t.Errorf("ConfigMap has no %s", key)
		}
	}
	var cfg struct {
		NodePathMap []struct {
			Node  string
			Paths []string
		}
	}
	if err := yaml.Unmarshal([]byte(data["config.json"]), &cfg); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	if len(cfg.NodePathMap) != 1 || cfg.NodePathMap[0].Node != "DEFAULT_PATH_FOR_NON_LISTED_NODES" ||
		len(cfg.NodePathMap[0].Paths) != 1 || cfg.NodePathMap[0].Paths[0] != "/var/local-path-provisioner" {
		t.Errorf("config.json nodePathMap = %+v", cfg.NodePathMap)
	}
	var helper map[string]any
	if err := yaml.Unmarshal([]byte(data["helperPod.yaml"]), &helper); err != nil {
		t.Fatalf("helperPod.yaml: %v", err)
	}
	if helper["kind"] != "Pod" {
		t.Errorf("helperPod.yaml is a %v, want a Pod", helper["kind"])
	}
	helperContainers, _, _ := unstructured.NestedSlice(helper, "spec", "containers")
	if len(helperContainers) != 1 {
		t.Fatalf("helper pod has %d containers, want 1", len(helperContainers))
	}
	hc := helperContainers[0].(map[string]any)
	// The provisioner copies the logs of the container by this name.
	if hc["name"] != "helper-pod" {
		t.Errorf("helper container is named %v, want helper-pod", hc["name"])
	}
	checkNeverPulled(t, "helper pod", hc, image)
	for _, img := range manifestImages(helper) {
		if img != image {
			t.Errorf("helper pod uses image %q, want %q", img, image)
		}
	}

	sc := byKind["StorageClass"]
	if sc.GetName() != "standard" {
		t.Errorf("StorageClass is %q, want standard", sc.GetName())
	}
	if got := sc.GetAnnotations()["storageclass.kubernetes.io/is-default-class"]; got != "true" {
		t.Errorf("StorageClass is-default-class = %q, want true", got)
	}
	for field, want := range map[string]string{
		"provisioner":       "rancher.io/local-path",
		"volumeBindingMode": "WaitForFirstConsumer",
		"reclaimPolicy":     "Delete",
	} {
		if got, _, _ := unstructured.NestedString(sc.Object, field); got != want {
			t.Errorf("StorageClass %s = %q, want %q", field, got, want)
		}
	}
}

func checkNeverPulled(t *testing.T, what string, container map[string]any, image string) {
	t.Helper()
	if container["image"] != image {
		t.Errorf("%s image = %v, want %s", what, container["image"], image)
	}
	if container["imagePullPolicy"] != "Never" {
		t.Errorf("%s imagePullPolicy = %v, want Never", what, container["imagePullPolicy"])
	}
}

// manifestImages returns the value of every "image" field anywhere in v.
func manifestImages(v any) []string {
	var found []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "image" {
				found = append(found, s)
				continue
			}
			found = append(found, manifestImages(e)...)
		}
	case []any:
		for _, e := range v {
			found = append(found, manifestImages(e)...)
		}
	}
	return found
}
