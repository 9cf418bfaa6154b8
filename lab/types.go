// Package lab owns the lab file: its Go types (the labctl.dev/v1alpha1 API),
// strict loading with positions, defaults and validation.
package lab

// APIVersion is the only lab file API version this labctl reads.
const APIVersion = "labctl.dev/v1alpha1"

// Kind is the only kind of document a lab file holds.
const Kind = "Lab"

// Lab is one hands-on lab: where it runs and the ordered steps the learner
// works through.
type Lab struct {
	APIVersion string   `yaml:"apiVersion" json:"apiVersion" jsonschema:"enum=labctl.dev/v1alpha1"`
	Kind       string   `yaml:"kind" json:"kind" jsonschema:"enum=Lab"`
	Metadata   Metadata `yaml:"metadata" json:"metadata"`
	Cluster    Cluster  `yaml:"cluster" json:"cluster,omitempty"`
	Sandbox    Sandbox  `yaml:"sandbox" json:"sandbox,omitempty"`
	Access     Access   `yaml:"access" json:"access,omitempty"`
	Steps      []Step   `yaml:"steps" json:"steps"`
	// Translations holds the lab's texts in other languages, by BCP 47 tag
	// (e.g. en): the learner whose labctl speaks one of them (--lang, or
	// the locale) reads the lab in it; a text a translation leaves out is
	// shown as written in metadata.language, and lint names it.
	Translations map[string]Translation `yaml:"translations" json:"translations,omitempty"`

	// src records where each field was written, for a lab that was parsed.
	src *source
	// written is the lab as written, for a lab In translated.
	written *Lab
}

// Metadata names and describes a lab.
type Metadata struct {
	// Name is a DNS label; cluster, container and volume names derive from it.
	Name string `yaml:"name" json:"name"`
	// Title is shown to the learner.
	Title string `yaml:"title" json:"title,omitempty"`
	// Language is the BCP 47 tag of the lab's texts, e.g. "ja" or "en".
	Language string `yaml:"language" json:"language,omitempty"`
	// Version of the lab's content, recorded in grade reports.
	Version string `yaml:"version" json:"version,omitempty"`
	// Goal says in a few sentences what the learner will be able to do.
	Goal string `yaml:"goal" json:"goal,omitempty"`
	// Why says why what the lab teaches matters (Markdown): the shell's
	// `lab why` shows it after the step's reason, the shell shows it again
	// when the last step passes, and the browser view beside the goal.
	Why string `yaml:"why" json:"why,omitempty"`
	// Draft marks a lab still being written: labctl lint then reports a
	// step whose checks are all placeholders (a command check running only
	// false, or a shell script of false or exit 1) or whose solve does nothing but fail as a warning, not
	// a problem. Remove it when every step has real checks and a solve.
	Draft bool `yaml:"draft" json:"draft,omitempty"`
}

// Translation is the learner's texts of a lab in one more language.
type Translation struct {
	Title string `yaml:"title" json:"title,omitempty"`
	Goal  string `yaml:"goal" json:"goal,omitempty"`
	Why   string `yaml:"why" json:"why,omitempty"`
	// Steps are the texts of each step, by the step's id.
	Steps map[string]StepText `yaml:"steps" json:"steps,omitempty"`
}

// StepText is the learner's texts of one step in a translation.
type StepText struct {
	Title        string `yaml:"title" json:"title,omitempty"`
	Instructions string `yaml:"instructions" json:"instructions,omitempty"`
	Why          string `yaml:"why" json:"why,omitempty"`
	Solution     string `yaml:"solution" json:"solution,omitempty"`
	// Hints are the step's hints in order; there may be fewer, not more.
	Hints []string `yaml:"hints" json:"hints,omitempty"`
	// Checks are the checks' descriptions, by check name.
	Checks map[string]string `yaml:"checks" json:"checks,omitempty"`
	// Mistakes are the mistakes' explanations (explain), by mistake name.
	Mistakes map[string]string `yaml:"mistakes" json:"mistakes,omitempty"`
	// Broken are the descriptions of the probe's broken worlds, in their
	// order: one string for a probe with one world.
	Broken BrokenTexts `yaml:"broken" json:"broken,omitempty"`
}

// BrokenTexts are translated descriptions of a probe's broken worlds, in
// their order; a single string stands for a list of one.
type BrokenTexts []string

// OneOrMany says that YAML may give one element for a list of one.
func (BrokenTexts) OneOrMany() {}

// Cluster describes the Kubernetes cluster the lab runs against.
type Cluster struct {
	// Provider is the cluster's provider: kind (the default), or none for a
	// lab with no cluster, whose steps are done with the sandbox's files
	// and tools (git, a shell, permissions) and judged by file, git and
	// command checks. up then brings up the sandbox and the grader only,
	// on no network; the learner has no kubeconfig, and kubectl says
	// that the lab has no cluster. Such a lab may set nothing else of
	// cluster nor access, and has no kube, access, permissions, reach,
	// matrix or audit checks, no kube: references and no probes.
	Provider string `yaml:"provider" json:"provider,omitempty" jsonschema:"enum=kind,enum=none"`
	// NodeImage overrides the kind node image; empty means labctl's default.
	NodeImage string `yaml:"nodeImage" json:"nodeImage,omitempty"`
	// Namespaces are created by up and recreated by reset.
	Namespaces []string `yaml:"namespaces" json:"namespaces,omitempty"`
	// PodSecurity is the Pod Security Standard enforced in the lab's
	// namespaces: baseline (default) refuses privileged, host namespace and
	// hostPath Pods; restricted also requires non-root, hardened Pods;
	// privileged allows everything, including a route from the learner to
	// the node and the host (lint warns).
	PodSecurity string `yaml:"podSecurity" json:"podSecurity,omitempty" jsonschema:"enum=baseline,enum=restricted,enum=privileged"`
	// Images are the container images the lab's workloads run. up loads each one into the
	// cluster's node from the host's Docker engine (kubelet never pulls them).
	Images []Image `yaml:"images" json:"images,omitempty"`
	// Workloads says what the lab needs of its Pods: run (default) means its
	// checks or scripts need Pods that run (logs, exec, ready replicas, a
	// Service that answers); declare means its checks only read what the API
	// server stores (specs, and status counts that controllers set, such as
	// status.replicas), never that a Pod runs. A declare lab runs as a class
	// as it is; a run lab needs a node per learner there (class up
	// --learner-nodes).
	Workloads string `yaml:"workloads" json:"workloads,omitempty" jsonschema:"enum=run,enum=declare"`
	// Workers are the cluster's worker nodes, beside its control plane
	// (which runs no lab Pods once a lab has workers). None by default: one
	// node runs everything. Up to 4.
	Workers []Node `yaml:"workers" json:"workers,omitempty"`
	// Addons are the components up installs in the cluster, built offline
	// like the node image: networkPolicy (NetworkPolicy enforced, ingress and
	// egress), storage (a default StorageClass whose claims bind, on the
	// node's disk), ingress (the default IngressClass, served on port 80 of
	// the control-plane node, whose address each Ingress's status shows),
	// metrics (metrics-server: kubectl top, and the metrics a
	// HorizontalPodAutoscaler scales by). A lab with workers always gets Pod
	// networking between its nodes.
	Addons []string `yaml:"addons" json:"addons,omitempty" jsonschema:"enum=networkPolicy,enum=storage,enum=ingress,enum=metrics"`
	// NodeAccess lets the learner reach each node of the cluster as root
	// from the sandbox, by its name (node NAME), for work done on a node:
	// static Pods, the kubelet, etcd backups, kubeadm's certificates. A
	// kind node is a privileged container, so root on a node is root on
	// this machine: install and up refuse such a lab without
	// --allow-host-access, and its grade says the learner had it.
	NodeAccess bool `yaml:"nodeAccess" json:"nodeAccess,omitempty"`
}

// Node is one worker node of the lab's cluster.
type Node struct {
	// Labels are set on the node (kubectl get nodes --show-labels), e.g.
	// {zone: a, disk: ssd}.
	Labels map[string]string `yaml:"labels" json:"labels,omitempty"`
	// Taints are set on the node when it joins, as kubectl taint writes them:
	// key=value:Effect or key:Effect, the effect NoSchedule, PreferNoSchedule
	// or NoExecute.
	Taints []string `yaml:"taints" json:"taints,omitempty"`
}

// Add-ons a lab can ask for (Cluster.Addons).
const (
	AddonNetworkPolicy = "networkPolicy"
	AddonStorage       = "storage"
	AddonIngress       = "ingress"
	AddonMetrics       = "metrics"
)

// Addons lists every add-on a lab can ask for.
var Addons = []string{AddonNetworkPolicy, AddonStorage, AddonIngress, AddonMetrics}

// MaxWorkers bounds a lab's worker nodes: each is a kind node container
// with its own kubelet and containerd.
const MaxWorkers = 4

// Image is one workload image.
type Image struct {
	// Name is the reference the lab's manifests use, with an explicit tag that is not
	// "latest" (e.g. labctl.local/rollout-web:1), so that kubelet's IfNotPresent never pulls.
	Name string `yaml:"name" json:"name"`
	// Build is a directory of the lab (relative to lab.yaml, inside the lab's directory)
	// holding a Dockerfile: labctl images build / up build the image from it offline and
	// tag it Name. When the directory holds a go.mod, labctl first runs, in it,
	// `go build -trimpath -ldflags='-s -w' -o <context>/app .` with CGO_ENABLED=0
	// (GOFLAGS=-mod=mod not set; a stdlib-only program needs no network), so the Dockerfile
	// can `COPY app /app`. The build argument BASE_IMAGE names labctl's Debian base image
	// (for recipes that want a shell and packages; FROM scratch is fine too).
	Build string `yaml:"build" json:"build,omitempty"`
	// Optional images are loaded when the host's engine has them; up does not refuse the
	// lab without them (the lab's checks do not need its Pods to run).
	Optional bool `yaml:"optional" json:"optional,omitempty"`
}

// Sandbox describes the learner's container.
type Sandbox struct {
	// Image overrides the sandbox image; empty means labctl's default.
	Image string `yaml:"image" json:"image,omitempty"`
	// WorkDir is the learner's starting directory (absolute).
	WorkDir string `yaml:"workDir" json:"workDir,omitempty"`
	// Fixtures is where the lab's fixtures/ directory is mounted read-only (absolute).
	Fixtures string `yaml:"fixtures" json:"fixtures,omitempty"`
	// Namespace is where the learner's kubectl starts (their kubeconfig's
	// namespace): one of cluster.namespaces; default the first.
	Namespace string `yaml:"namespace" json:"namespace,omitempty"`
}

// Access is the learner's Kubernetes identity. With no rules, the learner is
// admin of the lab's namespaces and reads, cluster-wide, only what
// ClusterView names.
type Access struct {
	// Rules are RBAC policy rules granted in each of the lab's namespaces.
	Rules []PolicyRule `yaml:"rules" json:"rules,omitempty"`
	// ClusterRules are RBAC policy rules granted cluster-wide.
	ClusterRules []PolicyRule `yaml:"clusterRules" json:"clusterRules,omitempty"`
	// ClusterView is what the learner may read (get, list, watch)
	// cluster-wide, as courses assume: kubectl get nodes, storageclass,
	// ingressclass, crd, kubectl top nodes. Unset, all of it: nodes,
	// persistentvolumes, storageclasses, csidrivers, csinodes,
	// ingressclasses, gatewayclasses, customresourcedefinitions,
	// runtimeclasses, priorityclasses and nodemetrics (metrics.k8s.io
	// nodes). None of them holds a secret; node status writes, nodes/proxy
	// and nodes/log stay refused. A list narrows it, e.g. [nodes,
	// storageclasses]; none gives nothing beside clusterRules.
	ClusterView ClusterView `yaml:"clusterView" json:"clusterView,omitempty"`
}

// PolicyRule mirrors rbac/v1 PolicyRule.
type PolicyRule struct {
	APIGroups []string `yaml:"apiGroups" json:"apiGroups,omitempty"`
	Resources []string `yaml:"resources" json:"resources,omitempty"`
	Verbs     []string `yaml:"verbs" json:"verbs"`
}

// Step is one unit of the learner's work, with the checks that say it is done.
type Step struct {
	// ID is unique within the lab ([a-z0-9-]); mistakes and --to name steps by it.
	ID    string `yaml:"id" json:"id"`
	Title string `yaml:"title" json:"title"`
	// Instructions are Markdown shown to the learner.
	Instructions string `yaml:"instructions" json:"instructions"`
	// Why explains why the step matters (Markdown, optional).
	Why string `yaml:"why" json:"why,omitempty"`
	// Solution is the step's answer for the learner, in words and commands
	// (Markdown, optional). The browser view keeps it closed until the
	// learner asks; labctl records that they did, and the grade says so.
	Solution string `yaml:"solution" json:"solution,omitempty"`
	// Setup is a bash script run in the sandbox, as root, before the step starts.
	Setup string `yaml:"setup" json:"setup,omitempty"`
	// Hints are shown one at a time, on request.
	Hints []string `yaml:"hints" json:"hints,omitempty"`
	// PassesInitially declares that the step's checks pass before its solve
	// script runs (labctl test then does not expect them to fail first).
	PassesInitially bool `yaml:"passesInitially" json:"passesInitially,omitempty"`
	// Checks must all pass for the step to be complete.
	Checks []Check `yaml:"checks" json:"checks"`
	// Solve is a bash script doing what a correct learner does, run in the
	// sandbox as the learner (login shell, cwd = sandbox workDir).
	Solve string `yaml:"solve" json:"solve"`
	// Mistakes are known wrong solutions and the checks that must catch them.
	Mistakes []Mistake `yaml:"mistakes" json:"mistakes,omitempty"`
	// Alternatives are other correct solutions: run from the state at the
	// start of the step, each must make every check pass, as Solve does.
	Alternatives []Alternative `yaml:"alternatives" json:"alternatives,omitempty"`
	// Probe, when set, runs the learner's work before the step's checks
	// judge it (see Probe).
	Probe *Probe `yaml:"probe" json:"probe,omitempty"`
}

// Alternative is another valid solution of a step, which labctl test must
// see pass. It is either a script, or a mutant of the solve that
// `labctl test --mutate` found every check lets pass and the author
// declares right, saying why.
type Alternative struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description,omitempty"`
	// Script runs in the sandbox like Step.Solve; an alternative with a
	// mutant has none.
	Script string `yaml:"script" json:"script,omitempty"`
	// Mutant is the id of a mutant of the solve, as `labctl test --mutate`
	// reports it (e.g. "Role ci/deployer: rules[0].verbs → -patch"), that
	// every check lets pass and that is right; it is judged only with
	// --mutate, which fails once it no longer passes or is no longer made.
	Mutant string `yaml:"mutant" json:"mutant,omitempty"`
	// Why says, for a mutant, why it is a right answer and not a missing
	// check.
	Why string `yaml:"why" json:"why,omitempty"`
}

// ProbeResult is the name of the result a step with a probe reports for
// the probe's run, beside its checks; no check of such a step may take it.
const ProbeResult = "probe"

// Probe tests what the learner built by running it: labctl first changes
// the world with the probe's identity (Setup), then runs Run in the
// sandbox as the learner with a deadline, then the step's checks judge what
// it did, and finally Restore puts the world back, whatever happened. A
// probe runs in labctl check, labctl grade, labctl test and the shell's
// lab check, never in the shell's automatic rounds.
type Probe struct {
	// Setup is a bash script run in the probe's own container, with the
	// probe's kubeconfig (KUBECONFIG is set: admin of the lab's namespaces,
	// ConfigMaps in labctl-probe, nothing cluster-wide), never in the
	// sandbox. The probe's other scripts run in that container too, and
	// what they leave running ends with the probe.
	Setup string `yaml:"setup" json:"setup,omitempty"`
	// Run is a bash command run in the sandbox as the learner's shell runs
	// it, e.g. /root/gitops/sync.sh.
	Run string `yaml:"run" json:"run"`
	// Timeout bounds Run, e.g. "60s"; default 60s.
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// Restore is a bash script run like Setup after the checks, always,
	// even when Run fails or times out.
	Restore string `yaml:"restore" json:"restore,omitempty"`
	// Needs names checks of the step that must pass before the probe runs
	// (the script exists and is executable); when one does not, the probe
	// is skipped and its result says why.
	Needs []string `yaml:"needs" json:"needs,omitempty"`
	// Broken are worlds Run must fail in, each a way what Run tests can be
	// down: before Setup, for each in turn, the host breaks it
	// (BrokenWorld.Setup), runs Run as above, and puts the world back
	// (BrokenWorld.Restore). A run that exits 0 in one fails the probe: a
	// test that passes when what it tests is down proves nothing. Only the
	// exit status of those runs counts; the checks judge the run that
	// follows Setup. One world may be written without the list. With a
	// negated Run ("! CMD", for a command that must fail in the world
	// Setup makes), CMD must exit 0 in each of these worlds: worlds where
	// it must succeed, such as the working one.
	Broken BrokenWorlds `yaml:"broken" json:"broken,omitempty"`
}

// BrokenWorlds are a probe's broken worlds, in the order they run; a
// single world stands for a list of one.
type BrokenWorlds []BrokenWorld

// OneOrMany says that YAML may give one element for a list of one.
func (BrokenWorlds) OneOrMany() {}

// BrokenWorld is a world a probe's run must fail in (see Probe.Broken).
type BrokenWorld struct {
	// Description says, in the lab's language, what is broken, e.g. "web
	// has no Pod to answer"; the probe's result quotes it.
	Description string `yaml:"description" json:"description"`
	// Setup breaks it, like Probe.Setup (the probe's identity, never in
	// the sandbox).
	Setup string `yaml:"setup" json:"setup"`
	// Restore puts back what Setup broke, like Probe.Restore, always.
	Restore string `yaml:"restore" json:"restore"`
}

// Mistake is a known wrong solution of a step. Run from the state at the
// start of its step, its script must make exactly the named checks fail.
type Mistake struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description,omitempty"`
	// Script runs in the sandbox like Step.Solve.
	Script string `yaml:"script" json:"script"`
	// Fails names checks of the same step that must fail after Script.
	Fails []string `yaml:"fails" json:"fails"`
	// Explain tells the learner, in the lab's language, what this mistake
	// is and how to put it right. It is shown when a step's failing checks
	// are exactly Fails and Evidence holds (see Step.LikelyMistakes).
	Explain string `yaml:"explain" json:"explain,omitempty"`
	// Evidence are checks that hold when the learner made this mistake and
	// not when they made another that fails the same checks: the mistake
	// is named only when every one passes. They run only to name it, after
	// a round whose failures are exactly Fails; they are never shown or
	// scored. A matrix check among them whose every cell a matrix check of
	// that round tried (a source labelled alike, the same address) is
	// judged from what that round found, without trying again. `labctl
	// test` proves they pass after Script.
	Evidence []Check `yaml:"evidence" json:"evidence,omitempty"`
	// Recover, when set, is the way back Explain describes, as a script
	// run after Script: `labctl test` then requires every check of the
	// step to pass, proving the learner who made this mistake can still
	// complete the step.
	Recover string `yaml:"recover" json:"recover,omitempty"`
}

// Check is one typed assertion. Exactly one of File, Git, Kube, Access, Permissions, Reach, Matrix, Command, Audit and Service is set.
type Check struct {
	// Name is unique within its step ([a-z0-9-]).
	Name string `yaml:"name" json:"name"`
	// Description says in the lab's language what is checked.
	Description string `yaml:"description" json:"description,omitempty"`
	// Timeout bounds the check, e.g. "10s"; default 10s.
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// Points this check is worth in a grade; default 1.
	Points int `yaml:"points" json:"points,omitempty"`
	// Optional checks are reported but not required to pass.
	Optional bool `yaml:"optional" json:"optional,omitempty"`
	// Final checks are the lab's final state: `labctl grade` judges them
	// again even when their step passed earlier, whose other results it
	// keeps as they were when the step passed.
	Final bool `yaml:"final" json:"final,omitempty"`

	File   *FileCheck   `yaml:"file" json:"file,omitempty"`
	Git    *GitCheck    `yaml:"git" json:"git,omitempty"`
	Kube   *KubeCheck   `yaml:"kube" json:"kube,omitempty"`
	Access *AccessCheck `yaml:"access" json:"access,omitempty"`
	// Permissions judges what identities may do as a whole set.
	Permissions *PermissionsCheck `yaml:"permissions" json:"permissions,omitempty"`
	Reach       *ReachCheck       `yaml:"reach" json:"reach,omitempty"`
	Matrix      *MatrixCheck      `yaml:"matrix" json:"matrix,omitempty"`
	Command     *CommandCheck     `yaml:"command" json:"command,omitempty"`
	Audit       *AuditCheck       `yaml:"audit" json:"audit,omitempty"`
	Service     *ServiceCheck     `yaml:"service" json:"service,omitempty"`
}

// ServiceCheck asserts whether a systemd service runs on one of the
// cluster's nodes, in a lab with cluster.nodeAccess. labctl judges it from
// the host: the container engine lists the node container's processes
// with the host's ps, and the service runs when a process that has run for
// 5 seconds or more is in the service's control group (.../kubelet.service;
// a service systemd starts again and again, failing as it starts, does not
// run). Nothing of the node runs,
// so a systemctl the learner, root there, replaced changes nothing.
type ServiceCheck struct {
	// Node is control-plane, worker, worker2, ... as for a file check's node.
	Node string `yaml:"node" json:"node"`
	// Unit is the systemd service, e.g. kubelet.service or containerd.service.
	Unit string `yaml:"unit" json:"unit"`
	// Running: true (default) requires a process of the unit, false requires none.
	Running *bool `yaml:"running" json:"running,omitempty"`
}

// WantsRunning reports what s requires: a process of the unit (the
// default) or none.
func (s *ServiceCheck) WantsRunning() bool { return s.Running == nil || *s.Running }

// FileCheck asserts things about one path in the sandbox. Every set field
// must hold.
type FileCheck struct {
	// Path is absolute: any path of the sandbox's file system but /proc,
	// /sys and /dev. The grader reads the learner's home (/root) and the
	// fixtures itself; any other path (/etc/nginx/nginx.conf, /tmp/out.txt)
	// is read from the host's side, read-only, links resolved within the
	// sandbox. Not in a class yet.
	Path string `yaml:"path" json:"path"`
	// Node, in a lab with cluster.nodeAccess, reads Path on one of the
	// cluster's nodes instead of the sandbox: control-plane, worker,
	// worker2, ... (kubectl get nodes shows them after the cluster's
	// name). labctl reads the file from the node's container through the
	// container engine, never with the node's own programs, which the
	// learner, root there, may have replaced.
	Node string `yaml:"node" json:"node,omitempty"`
	// Exists: true (default) requires the path, false requires its absence.
	Exists *bool `yaml:"exists" json:"exists,omitempty"`
	// Type is "file" (regular file) or "dir".
	Type string `yaml:"type" json:"type,omitempty" jsonschema:"enum=file,enum=dir"`
	// Executable requires (true) or forbids (false) an executable bit.
	Executable *bool `yaml:"executable" json:"executable,omitempty"`
	// Equals compares the content with surrounding white space trimmed.
	Equals *Value `yaml:"equals" json:"equals,omitempty"`
	// Contains requires each of these substrings.
	Contains []string `yaml:"contains" json:"contains,omitempty"`
	// Matches requires each of these regular expressions (RE2, multi-line mode).
	Matches []string `yaml:"matches" json:"matches,omitempty"`
	// NotMatches forbids each of these regular expressions.
	NotMatches []string `yaml:"notMatches" json:"notMatches,omitempty"`
	// Lines bounds the number of non-empty lines.
	Lines *Range `yaml:"lines" json:"lines,omitempty"`
	// Script requires a share of the letters to be in a Unicode script.
	Script *ScriptShare `yaml:"script" json:"script,omitempty"`
	// Field asserts on a field of the file parsed as JSON or YAML.
	Field *FieldAssert `yaml:"field" json:"field,omitempty"`
	// NotInside requires the path (symbolic links resolved) to lie outside this directory.
	NotInside string `yaml:"notInside" json:"notInside,omitempty"`
	// WrittenDuringProbe requires the file to have been modified since the
	// step's probe started, that is by the probe's run; only in a step
	// with a probe.
	WrittenDuringProbe bool `yaml:"writtenDuringProbe" json:"writtenDuringProbe,omitempty"`
}

// Range bounds a count; a nil end is open.
type Range struct {
	Min *int `yaml:"min" json:"min,omitempty"`
	Max *int `yaml:"max" json:"max,omitempty"`
}

// ScriptShare requires at least Min (0..1) of a text's letters to be in the
// Unicode script named by Name (e.g. "Hangul", "Han", "Latin").
type ScriptShare struct {
	Name string  `yaml:"name" json:"name"`
	Min  float64 `yaml:"min" json:"min"`
}

// FieldAssert selects values by Path from a parsed document and asserts on
// each of them. Path is dotted with [N], [*], [?(@.key=="value")] (the
// elements of a list whose key holds the string) and ["key"] segments, e.g.
// spec.template.spec.containers[*].image,
// status.conditions[?(@.type=="Ready")].status or
// metadata.labels["app.kubernetes.io/name"].
// A path that selects nothing fails, unless Exists is false.
type FieldAssert struct {
	Path string `yaml:"path" json:"path"`
	// Format is "json" or "yaml"; default from the file name (.json is JSON, else YAML).
	Format string `yaml:"format" json:"format,omitempty" jsonschema:"enum=json,enum=yaml"`
	Assert `yaml:",inline" json:",inline"`
}

// Assert is the comparison applied to one or more values. Every set field must hold.
type Assert struct {
	// Exists: true (default) requires the field, false requires its absence.
	Exists *bool `yaml:"exists" json:"exists,omitempty"`
	// Equals compares values exactly (types matter: 3 is not "3").
	Equals *Value `yaml:"equals" json:"equals,omitempty"`
	// NotEquals forbids a value.
	NotEquals *Value `yaml:"notEquals" json:"notEquals,omitempty"`
	// Matches and NotMatches apply a regular expression to string values.
	Matches    string `yaml:"matches" json:"matches,omitempty"`
	NotMatches string `yaml:"notMatches" json:"notMatches,omitempty"`
	// Type is one of string, number, integer, boolean, object, array, null.
	Type string `yaml:"type" json:"type,omitempty" jsonschema:"enum=string,enum=number,enum=integer,enum=boolean,enum=object,enum=array,enum=null"`
	// GTE and LTE compare numbers.
	GTE *Value `yaml:"gte" json:"gte,omitempty"`
	LTE *Value `yaml:"lte" json:"lte,omitempty"`
	// SubsetOf requires an object's entries all to appear in the given object.
	SubsetOf *Value `yaml:"subsetOf" json:"subsetOf,omitempty"`
	// StoredAs compares like Equals, as the API server stores what is
	// applied: every key the value sets must hold the same in the given
	// value, which may have more (the server's defaults, such as a
	// fieldRef's apiVersion); lists match item by item and have the same
	// length. E.g. a manifest's env in the repository, storedAs the
	// Deployment's env in the cluster.
	StoredAs *Value `yaml:"storedAs" json:"storedAs,omitempty"`
	// Any makes the assertions hold for at least one of the values a path
	// with [*] selects, instead of every one (e.g. data[*] equals a
	// greeting: some key of the ConfigMap holds it, whatever other keys
	// there are).
	Any bool `yaml:"any" json:"any,omitempty"`
}

// Operands are the values the assertion compares with, set or not.
func (a *Assert) Operands() []*Value {
	return []*Value{a.Equals, a.NotEquals, a.GTE, a.LTE, a.SubsetOf, a.StoredAs}
}

// GitCheck reads a repository with go-git. Every set field must hold.
type GitCheck struct {
	// Repo is the absolute path of the work tree (or bare directory): any
	// path of the sandbox's file system but /proc, /sys and /dev. The
	// grader reads a repository in the learner's home (/root) or the
	// fixtures itself; one elsewhere (/srv/app, /etc under etckeeper) is
	// read whole from the host's side, read-only, links resolved within
	// the sandbox, at most 8 MiB with its work tree, and judged with the
	// same rules. Not in a class yet.
	Repo string `yaml:"repo" json:"repo"`
	// Exists: true (default) requires a repository at Repo, false its absence.
	Exists *bool `yaml:"exists" json:"exists,omitempty"`
	// Config names keys (e.g. user.name) that must be set non-empty in the
	// repository's own .git/config.
	Config []string `yaml:"config" json:"config,omitempty"`
	// Commits bounds the number of commits reachable from HEAD.
	Commits *Range `yaml:"commits" json:"commits,omitempty"`
	// Since "step" counts Commits from the commit the repository was at
	// when the step began, as labctl saw it then (never the commits'
	// dates, which the learner sets): the commits reachable from HEAD and
	// not from that one. A step-start commit that is no longer in HEAD's
	// history (amended, rebased or reset away) fails the check. The steps
	// just before it that do no work in the repository (no check of
	// theirs looks at it) share its start: a commit the learner made for
	// it before checking the step before counts. A start labctl noted only
	// at the step's first check cannot fail the learner for too few
	// commits: the check is an error that asks for a new one.
	Since string `yaml:"since" json:"since,omitempty" jsonschema:"enum=step"`
	// ReportHead is labctl's own, never a lab's: the check passes and says
	// which commit HEAD is (checks.ReportHead).
	ReportHead bool `yaml:"-" json:"reportHead,omitempty"`
	// Clean requires (true) or forbids (false) an empty `git status --porcelain`.
	Clean *bool `yaml:"clean" json:"clean,omitempty"`
	// Tracked paths must be in HEAD's tree.
	Tracked []string `yaml:"tracked" json:"tracked,omitempty"`
	// Message asserts on commit messages.
	Message *MessageAssert `yaml:"message" json:"message,omitempty"`
	// Field asserts on a field of a file in HEAD's tree.
	Field *GitFieldAssert `yaml:"field" json:"field,omitempty"`
}

// MessageAssert selects commits reachable from HEAD and asserts on their messages.
type MessageAssert struct {
	// Which commits: "last" (HEAD, default), "first", "any" (at least one) or "all".
	Which string `yaml:"which" json:"which,omitempty" jsonschema:"enum=last,enum=first,enum=any,enum=all"`
	// Touching limits the commits to those that changed this path.
	Touching string `yaml:"touching" json:"touching,omitempty"`
	// Matches is a regular expression the message must match.
	Matches string `yaml:"matches" json:"matches,omitempty"`
	// MinLength is the shortest acceptable message, in characters, trimmed.
	MinLength int `yaml:"minLength" json:"minLength,omitempty"`
}

// GitFieldAssert asserts on a field of a file as committed at HEAD.
type GitFieldAssert struct {
	// File is relative to the repository root.
	File        string `yaml:"file" json:"file"`
	FieldAssert `yaml:",inline" json:",inline"`
}

// KubeCheck reads one object by Name, or the objects a Selector selects,
// with the grader's credentials.
type KubeCheck struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	Namespace  string `yaml:"namespace" json:"namespace,omitempty"`
	// Name is the one object read; exactly one of Name and Selector is set.
	Name string `yaml:"name" json:"name,omitempty"`
	// Selector selects the objects of Kind in Namespace by label, in
	// kubectl's -l syntax (app=web,tier!=db, env in (a,b), !legacy); ""
	// selects every object. The grader may then list the kind.
	Selector *string `yaml:"selector" json:"selector,omitempty"`
	// Count bounds how many objects Selector selects; default at least one.
	// Only with Selector.
	Count *Range `yaml:"count" json:"count,omitempty"`
	// Exists: true (default) requires the object, false its absence. Only
	// with Name (a selector says the same with count: {max: 0}).
	Exists *bool `yaml:"exists" json:"exists,omitempty"`
	// Labels must have these values, on every selected object.
	Labels map[string]string `yaml:"labels" json:"labels,omitempty"`
	// Field asserts on a field of the object (same path syntax as files);
	// with Selector, on the values the path selects in all of the selected
	// objects together.
	Field *FieldAssert `yaml:"field" json:"field,omitempty"`
	// MatchesFile is a file of manifests in the learner's home (absolute):
	// the objects Selector selects must be exactly the file's objects of
	// Kind in Namespace (a manifest without a namespace counts there) that
	// the selector selects, by name, each with the file's spec once the API
	// server's defaults are added. The file then holds what is live:
	// applying it changes nothing. Only with Selector, and only for
	// networking.k8s.io/v1 NetworkPolicy, the kind whose defaults labctl
	// adds (a port's protocol TCP; policyTypes from the rules).
	MatchesFile string `yaml:"matchesFile" json:"matchesFile,omitempty"`
	// Wait reads again, about once a second, until every assertion holds,
	// for as long as the check's timeout, as kubectl wait does: a Pod that
	// becomes Ready a few seconds after the learner asks passes. A check
	// that still fails near its timeout fails with what it last found. Its
	// timeout is at most 10 minutes (MaxWaitTimeout).
	Wait bool `yaml:"wait" json:"wait,omitempty"`
}

// AccessCheck asks the API server whether an identity may do something (a
// SubjectAccessReview, sent with the grader's credentials): the answer of
// the cluster's authorizers, whatever Roles, bindings or groups grant it.
type AccessCheck struct {
	// ServiceAccount is namespace/name; the review carries the groups the
	// API server gives its tokens (system:serviceaccounts,
	// system:serviceaccounts:NAMESPACE, system:authenticated). Exactly one of
	// ServiceAccount and User is set.
	ServiceAccount string `yaml:"serviceAccount" json:"serviceAccount,omitempty"`
	// User is a user name, as a client certificate or token names it.
	User string `yaml:"user" json:"user,omitempty"`
	// Groups are the user's groups beside system:authenticated; only with User.
	Groups []string `yaml:"groups" json:"groups,omitempty"`
	// Verb is get, list, watch, create, update, patch, delete,
	// deletecollection, or another verb an authorizer knows (impersonate, bind, escalate, use).
	Verb string `yaml:"verb" json:"verb"`
	// Group is the resource's API group; "" (default) is the core group.
	Group string `yaml:"group" json:"group,omitempty"`
	// Resource is the plural resource name, e.g. deployments or secrets.
	Resource string `yaml:"resource" json:"resource"`
	// Subresource, e.g. scale, log or exec.
	Subresource string `yaml:"subresource" json:"subresource,omitempty"`
	// Namespace the request is in; empty asks about the whole cluster.
	Namespace string `yaml:"namespace" json:"namespace,omitempty"`
	// Name of the one object asked about; empty asks about any.
	Name string `yaml:"name" json:"name,omitempty"`
	// Allowed is the answer the check requires: true (may) or false (may not).
	Allowed *bool `yaml:"allowed" json:"allowed"`
	// Mark is labctl's own, never a lab's: the check asks nothing and
	// marks, with the request's credentials, that step Mark began
	// (checks.MarkStep).
	Mark string `yaml:"-" json:"mark,omitempty"`
}

// ReachCheck tries a TCP connection from inside the cluster: labctl starts
// a short-lived Pod in From.Namespace, labelled like the lab's own Pods
// there that From.Labels select (or with exactly From.Labels when none
// runs), which tries To. The Pod is never Ready, so no Service sends it
// traffic, and no controller adopts it. With the networkPolicy add-on, it
// tries only once the policy agent on every node has synced since it got
// its address, so the policies in force judge it. A lab with reach checks
// needs workloads: run.
type ReachCheck struct {
	From ReachFrom `yaml:"from" json:"from"`
	// To is host:port: a Service's name (web, or web.shop), another DNS
	// name, or an IP address, resolved by the cluster's DNS from the Pod.
	To string `yaml:"to" json:"to"`
	// Allowed is what the check requires: true, the connection opens
	// within 3 seconds; false, it does not (refused, timed out, or the name
	// does not resolve).
	Allowed *bool `yaml:"allowed" json:"allowed"`
}

// ReachFrom is where a reach check's Pod runs and what it looks like.
type ReachFrom struct {
	// Namespace is one of the lab's namespaces.
	Namespace string `yaml:"namespace" json:"namespace"`
	// Labels select the Pod to stand in for, e.g. {app: shop, tier: web};
	// the check's Pod carries every label of the first running one.
	Labels map[string]string `yaml:"labels" json:"labels,omitempty"`
}

// ---------------------------------------------------------------- matrix checks

// MatrixCheck judges every path between a set of workloads: each source
// (a Pod shape the lab states: a namespace and labels) tries each target
// (host:port), and every cell of that table must be as the lab says, the
// cells not listed in Open or Closed as Unlisted says. labctl keeps one
// prober Pod per source, made by the grader with exactly the source's
// labels (never copied from a running Pod), and remakes one the learner
// changed; once the policy agent has synced, every cell is tried at once.
// A failure names each wrong cell. A lab with a matrix check needs
// workloads: run and the networkPolicy add-on.
type MatrixCheck struct {
	// Sources are the workload shapes that connect, e.g. {name: web,
	// namespace: shop, labels: {app: shop, tier: web}}; a source without
	// labels is a new Pod that no label selects.
	Sources []MatrixSource `yaml:"sources" json:"sources"`
	// Targets are where the sources connect to, e.g. {name: db, to:
	// db.shop:5432}: a Service's name, another DNS name (the API server
	// is kubernetes.default:443, DNS kube-dns.kube-system:53), or an IP
	// address outside the cluster.
	Targets []MatrixTarget `yaml:"targets" json:"targets"`
	// Open lists the cells whose connection must open.
	Open []MatrixCells `yaml:"open" json:"open,omitempty"`
	// Closed lists the cells whose connection must not open.
	Closed []MatrixCells `yaml:"closed" json:"closed,omitempty"`
	// Unlisted is what every cell in neither Open nor Closed must be:
	// closed (deny unless listed) or open.
	Unlisted string `yaml:"unlisted" json:"unlisted"`
}

// MatrixSource is one workload shape a matrix check connects from.
type MatrixSource struct {
	// Name names the source in the lab's cells and in messages ([a-z0-9-]).
	Name string `yaml:"name" json:"name"`
	// Namespace is one of the lab's namespaces.
	Namespace string `yaml:"namespace" json:"namespace"`
	// Labels are the prober Pod's labels, all of them.
	Labels map[string]string `yaml:"labels" json:"labels,omitempty"`
}

// MatrixTarget is one place a matrix check connects to: exactly one of
// To and Source.
type MatrixTarget struct {
	// Name names the target in the lab's cells and in messages ([a-z0-9-]).
	Name string `yaml:"name" json:"name"`
	// To is host:port, e.g. api.shop:80.
	To string `yaml:"to" json:"to,omitempty"`
	// Source names one of the check's sources: its prober Pod, which
	// listens on TCP port 8080 (a Pod the lab does not run yet, e.g. a new
	// Pod without labels that a default deny must close).
	Source string `yaml:"source" json:"source,omitempty"`
	// Port is the prober's port to try, with source: 8080 unless given
	// (1-65535). The prober listens on 8080 and on every port the
	// check's targets name for it, e.g. a Pod labelled like db that a
	// policy must not open on db's port 5432, or one labelled like the
	// cluster's DNS that a policy must not open on port 53 (below 1024,
	// the prober's Pod sets the sysctl net.ipv4.ip_unprivileged_port_start,
	// which every Pod Security level allows).
	Port int `yaml:"port" json:"port,omitempty"`
}

// MatrixCells are the cells from each of From to each of To; "*" is every
// source, or every target.
type MatrixCells struct {
	From []string `yaml:"from" json:"from"`
	To   []string `yaml:"to" json:"to"`
}

// CommandCheck runs a program in the grader: the sandbox's image, which
// sees of the sandbox only the learner's home and the fixtures, read-only
// (its /etc, /tmp and /opt are its own: judge a file there with a file
// check, which reads the sandbox's).
// The program runs with labctl's environment (HOME=/nonexistent, git
// without global, system or repository hooks, Python without the user's
// site directory or the working directory on its path), as a user of its
// own that owns no file and keeps only DAC_OVERRIDE: it reads every file,
// and git refuses the learner's repositories as not theirs (use a git
// check). It is the escape hatch for what no other kind covers: a program
// or script it runs from /root is the learner's to change, so prefer the
// other kinds. `labctl install` and `lint -v` list a lab's command checks.
type CommandCheck struct {
	// Run is the program and its arguments (no shell unless you name one).
	Run []string `yaml:"run" json:"run"`
	// Dir is the working directory; default /.
	Dir string `yaml:"dir" json:"dir,omitempty"`
	// ExitCode expected; default 0.
	ExitCode *int `yaml:"exitCode" json:"exitCode,omitempty"`
	// Stdout must match this regular expression.
	Stdout string `yaml:"stdout" json:"stdout,omitempty"`
}
