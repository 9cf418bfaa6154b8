package lab

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// check wraps one check's YAML (indented for a list item under checks:) in
// a lab that is otherwise valid.
func check(body string) string { return header + body }

// TestValidateRules gives every rule a lab that breaks it and a minimally
// different lab that keeps it. The bad lab marks the line the problem must
// point at with "#!"; want is the problem's path and message (a prefix of it).
func TestValidateRules(t *testing.T) {
	tests := []struct {
		name, bad, good, want string
	}{{
		name: "apiVersion",
		bad:  strings.Replace(header, "labctl.dev/v1alpha1", "labctl.dev/v1 #!", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `apiVersion: "labctl.dev/v1" is not supported`,
	}, {
		name: "apiVersion missing",
		bad:  strings.Replace(header, "apiVersion: labctl.dev/v1alpha1\nkind: Lab\n", "kind: Lab #!\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `apiVersion: missing; a lab file starts with apiVersion: labctl.dev/v1alpha1`,
	}, {
		name: "kind",
		bad:  strings.Replace(header, "kind: Lab", "kind: Cluster #!", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `kind: "Cluster" is not a lab`,
	}, {
		name: "metadata.name too long",
		bad:  strings.Replace(header, "name: t\n", "name: "+strings.Repeat("a", 41)+" #!\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: strings.Replace(header, "name: t\n", "name: "+strings.Repeat("a", 40)+"\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		want: `metadata.name: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" is 41 characters; use at most 40`,
	}, {
		name: "metadata.name not a DNS label",
		bad:  strings.Replace(header, "name: t\n", "name: -lab #!\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: strings.Replace(header, "name: t\n", "name: lab-1\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		want: `metadata.name: "-lab" is not a DNS label`,
	}, {
		name: "metadata.language",
		bad:  strings.Replace(header, "name: t\n", "name: t\n  language: english language #!\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: strings.Replace(header, "name: t\n", "name: t\n  language: pt-BR\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		want: `metadata.language: "english language" is not a BCP 47 language tag`,
	}, {
		name: "cluster.provider",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster: {provider: k3d} #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster: {provider: kind}\n",
		want: `cluster.provider: "k3d" is not supported; use "kind" (a kind cluster, the default) or "none"`,
	}, {
		name: "no cluster: a kube check",
		bad:  header + "      - {name: c, kube: {apiVersion: v1, kind: ConfigMap, namespace: n, name: x}} #!\ncluster: {provider: none}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster: {provider: none}\n",
		want: `steps[0].checks[0].kube: a lab with no cluster (cluster.provider: none) has no API server for a kube check to ask; judge the learner's work with file, git or command checks`,
	}, {
		name: "no cluster: an audit check in a mistake's evidence",
		bad:  header + "      - {name: c, file: {path: /root/x}}\n    mistakes:\n      - name: m\n        script: 'true'\n        fails: [c]\n        evidence:\n          - {name: e, audit: {verb: create, resource: pods}} #!\ncluster: {provider: none}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n    mistakes:\n      - name: m\n        script: 'true'\n        fails: [c]\n        evidence:\n          - {name: e, file: {path: /root/y}}\ncluster: {provider: none}\n",
		want: `steps[0].mistakes[0].evidence[0].audit: a lab with no cluster (cluster.provider: none) has no API server for a audit check to ask`,
	}, {
		name: "no cluster: a kube: reference",
		bad:  header + "      - name: c\n        file:\n          path: /root/x\n          equals: {ref: 'kube:v1/ConfigMap/n/x#data.a'} #!\ncluster: {provider: none}\n",
		good: header + "      - name: c\n        file:\n          path: /root/x\n          equals: {ref: 'file:/root/y'}\ncluster: {provider: none}\n",
		want: `a lab with no cluster (cluster.provider: none) has no API server for a kube: reference to read`,
	}, {
		name: "no cluster: namespaces",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  provider: none\n  namespaces: [demo] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  provider: none\n",
		want: `cluster.namespaces: a lab with no cluster (cluster.provider: none) has no API server: there is nothing for it to set up; remove cluster.namespaces, or give the lab a cluster (remove provider: none)`,
	}, {
		name: "no cluster: workloads",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  provider: none\n  workloads: declare #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  provider: none\n",
		want: `cluster.workloads: a lab with no cluster`,
	}, {
		name: "no cluster: the learner's access",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster: {provider: none}\naccess:\n  clusterView: [nodes] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster: {provider: none}\n",
		want: `access.clusterView: a lab with no cluster`,
	}, {
		name: "access.clusterView unknown",
		bad:  header + "      - {name: c, file: {path: /root/x}}\naccess:\n  clusterView: [nodes, secrets] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\naccess:\n  clusterView: [nodes, storageclasses]\n",
		want: `access.clusterView[1]: "secrets" is not a kind the learner can be given to read; use nodes, persistentvolumes,`,
	}, {
		name: "access.clusterView none not alone",
		bad:  header + "      - {name: c, file: {path: /root/x}}\naccess:\n  clusterView: [nodes, none] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\naccess:\n  clusterView: none\n",
		want: `access.clusterView[1]: none gives the learner no cluster-wide reading and must stand alone`,
	}, {
		name: "access.clusterView twice",
		bad:  header + "      - {name: c, file: {path: /root/x}}\naccess:\n  clusterView: [nodes, nodes] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\naccess:\n  clusterView: nodes\n",
		want: `access.clusterView[1]: "nodes" is listed twice`,
	}, {
		name: "access.clusterView empty",
		bad:  header + "      - {name: c, file: {path: /root/x}}\naccess:\n  clusterView: [] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\naccess:\n  clusterView: [nodemetrics]\n",
		want: `access.clusterView: an empty list; write clusterView: none`,
	}, {
		name: "cluster.podSecurity",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster: {podSecurity: none} #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster: {podSecurity: restricted}\n",
		want: `cluster.podSecurity: "none" is not a Pod Security Standard; use baseline (the default), restricted or privileged`,
	}, {
		name: "cluster.workloads",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workloads: Run #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workloads: declare\n",
		want: `cluster.workloads: "Run" is not a workloads mode; use run (the default: the lab's Pods must run) or declare`,
	}, {
		name: "too many workers",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workers: [{}, {}, {}, {}, {}] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workers: [{}, {}, {}, {}]\n",
		want: `cluster.workers: 5 workers is more than 4`,
	}, {
		name: "worker label key",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workers:\n  - labels: {\"zone a\": x} #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workers:\n  - labels: {zone: a, example.com/disk: ssd}\n",
		want: `cluster.workers[0].labels: "zone a" is not a label key`,
	}, {
		name: "worker label the cluster sets",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workers:\n  - labels: {node-role.kubernetes.io/db: \"\"} #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workers:\n  - labels: {role: db}\n",
		want: `cluster.workers[0].labels: "node-role.kubernetes.io/db" is a label the cluster sets itself`,
	}, {
		name: "worker taint effect",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workers:\n  - taints: [dedicated=db:NoScheduled] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  workers:\n  - taints: [dedicated=db:NoSchedule, gpu:NoExecute]\n",
		want: `cluster.workers[0].taints[0]: taint "dedicated=db:NoScheduled": "NoScheduled" is not an effect`,
	}, {
		name: "addon unknown",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  addons: [calico] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  addons: [networkPolicy, storage]\n",
		want: `cluster.addons[0]: "calico" is not an add-on; use one of networkPolicy, storage, ingress, metrics`,
	}, {
		name: "namespace not a DNS label",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  namespaces:\n  - ok\n  - Not_OK #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  namespaces:\n  - ok\n  - ok-too\n",
		want: `cluster.namespaces[1]: "Not_OK" is not a DNS label`,
	}, {
		name: "namespace listed twice",
		bad:  header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  namespaces:\n  - web\n  - web #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  namespaces:\n  - web\n  - db\n",
		want: `cluster.namespaces[1]: namespace "web" is listed twice (first at line 14)`,
	}, {
		name: "sandbox.workDir relative",
		bad:  header + "      - {name: c, file: {path: /root/x}}\nsandbox: {workDir: root} #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\nsandbox: {workDir: /root}\n",
		want: `sandbox.workDir: "root" must be an absolute path`,
	}, {
		name: "sandbox.fixtures relative",
		bad:  header + "      - {name: c, file: {path: /root/x}}\nsandbox: {fixtures: ./fixtures} #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\nsandbox: {fixtures: /fixtures}\n",
		want: `sandbox.fixtures: "./fixtures" must be an absolute path`,
	}, {
		name: "access rule without verbs",
		bad:  header + "      - {name: c, file: {path: /root/x}}\naccess:\n  rules:\n  - resources: [pods] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\naccess:\n  rules:\n  - {resources: [pods], verbs: [get]}\n",
		want: `access.rules[0].verbs: a rule needs at least one verb`,
	}, {
		name: "no steps",
		bad:  "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata: {name: t}\nsteps: [] #!\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `steps: a lab needs at least one step`,
	}, {
		name: "step id twice",
		bad:  header + "      - {name: c, file: {path: /root/x}}\n  - id: s1 #!\n    title: T\n    instructions: I\n    solve: S\n    checks: [{name: c, file: {path: /root/x}}]\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n  - id: s2\n    title: T\n    instructions: I\n    solve: S\n    checks: [{name: c, file: {path: /root/x}}]\n",
		want: `steps[1].id: step id "s1" is used twice (first at line 6)`,
	}, {
		name: "step id characters",
		bad:  strings.Replace(header, "id: s1", "id: Step_1 #!", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: strings.Replace(header, "id: s1", "id: step-1", 1) + "      - {name: c, file: {path: /root/x}}\n",
		want: `steps[0].id: step "Step_1" may hold only lower-case letters, digits and '-'`,
	}, {
		name: "step id missing",
		bad:  strings.Replace(header, "  - id: s1\n    title: T", "  - title: T #!", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `steps[0].id: missing; give the step a name`,
	}, {
		name: "step title missing",
		bad:  strings.Replace(header, "  - id: s1\n    title: T\n", "  - id: s1 #!\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `steps[0].title: missing; give the step a title`,
	}, {
		name: "step instructions empty",
		bad:  strings.Replace(header, "instructions: I", `instructions: "  " #!`, 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `steps[0].instructions: missing; tell the learner what to do`,
	}, {
		name: "empty solve",
		bad:  strings.Replace(header, "solve: S", `solve: "" #!`, 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `steps[0].solve: missing; write the bash script a correct learner would run`,
	}, {
		name: "step without checks",
		bad:  strings.Replace(header, "    checks:\n", "    checks: [] #!\n", 1),
		good: header + "      - {name: c, file: {path: /root/x}}\n",
		want: `steps[0].checks: a step needs at least one check`,
	}, {
		name: "check name twice",
		bad:  check("      - {name: c, file: {path: /root/x}}\n      - {name: c, file: {path: /root/y}} #!\n"),
		good: check("      - {name: c, file: {path: /root/x}}\n      - {name: d, file: {path: /root/y}}\n"),
		want: `steps[0].checks[1].name: check name "c" is used twice in this step (first at line 11)`,
	}, {
		name: "check name missing",
		bad:  check("      - file: {path: /root/x} #!\n"),
		good: check("      - name: c\n        file: {path: /root/x}\n"),
		want: `steps[0].checks[0].name: missing; give the check a name`,
	}, {
		name: "check without a kind",
		bad:  check("      - name: c #!\n        description: nothing to check\n"),
		good: check("      - name: c\n        file: {path: /root/x}\n"),
		want: `steps[0].checks[0]: a check needs exactly one of file, git, kube, access, reach, matrix, command, audit or service`,
	}, {
		name: "check of two kinds",
		bad:  check("      - name: c #!\n        file: {path: /root/x}\n        command: {run: [ls]}\n"),
		good: check("      - name: c\n        command: {run: [ls]}\n"),
		want: `steps[0].checks[0]: a check has exactly one of file, git, kube, access, reach, matrix, command, audit or service, found file and command`,
	}, {
		name: "kube check without name or selector",
		bad:  check("      - name: c\n        kube: {apiVersion: v1, kind: Pod, namespace: a} #!\n"),
		good: check("      - name: c\n        kube: {apiVersion: v1, kind: Pod, namespace: a, selector: app=web}\n"),
		want: `steps[0].checks[0].kube.name: missing; name the object to read, or select objects by label with selector`,
	}, {
		name: "kube check with name and selector",
		bad:  check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          name: web\n          selector: app=web #!\n"),
		good: check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          selector: app=web\n"),
		want: `steps[0].checks[0].kube.selector: a kube check reads one object by name or the objects a selector selects, not both`,
	}, {
		name: "kube selector syntax",
		bad:  check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          selector: app==web=x #!\n"),
		good: check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          selector: \"app in (web, api),!legacy\"\n"),
		want: `steps[0].checks[0].kube.selector: "app==web=x" is not a label selector`,
	}, {
		name: "kube selector with exists",
		bad:  check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          selector: \"\"\n          exists: false #!\n"),
		good: check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          selector: \"\"\n          count: {max: 0}\n"),
		want: `steps[0].checks[0].kube.exists: a kube check with a selector counts the objects instead`,
	}, {
		name: "kube count without selector",
		bad:  check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          name: web\n          count: {min: 1} #!\n"),
		good: check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          name: web\n"),
		want: `steps[0].checks[0].kube.count: count bounds the objects a selector selects`,
	}, {
		name: "permissions check subject with two identities",
		bad:  check("      - name: c\n        permissions:\n          subjects:\n            - {serviceAccount: ci/deployer, group: ci} #!\n") + "cluster: {namespaces: [shop, ci]}\n",
		good: check("      - name: c\n        permissions:\n          subjects:\n            - {serviceAccount: ci/deployer}\n") + "cluster: {namespaces: [shop, ci]}\n",
		want: "steps[0].checks[0].permissions.subjects[0]: name exactly one of serviceAccount (namespace/name), user and group",
	}, {
		name: "permissions check namespace outside the lab",
		bad:  check("      - name: c\n        permissions:\n          namespaces: [shop, prod] #!\n          subjects: [{group: ops}]\n") + "cluster: {namespaces: [shop, ci]}\n",
		good: check("      - name: c\n        permissions:\n          namespaces: [shop, ci]\n          subjects: [{group: ops}]\n") + "cluster: {namespaces: [shop, ci]}\n",
		want: "steps[0].checks[0].permissions.namespaces[1]: \"prod\" is not one of the lab's namespaces",
	}, {
		name: "permissions check resource written as kubectl does not",
		bad:  check("      - name: c\n        permissions:\n          resources: [deployments/apps/web] #!\n          subjects: [{group: ops}]\n") + "cluster: {namespaces: [shop, ci]}\n",
		good: check("      - name: c\n        permissions:\n          resources: [deployments.apps]\n          subjects: [{group: ops}]\n") + "cluster: {namespaces: [shop, ci]}\n",
		want: "steps[0].checks[0].permissions.resources[0]: \"deployments/apps/web\" is not a resource",
	}, {
		name: "permissions stated on a resource not asked about",
		bad:  check("      - name: c\n        permissions:\n          subjects:\n            - serviceAccount: ci/deployer\n              must:\n                - {verbs: [get], resources: [deployments.apps]} #!\n") + "cluster: {namespaces: [shop, ci]}\n",
		good: check("      - name: c\n        permissions:\n          resources: [deployments.apps]\n          subjects:\n            - serviceAccount: ci/deployer\n              must:\n                - {verbs: [get], resources: [deployments.apps]}\n") + "cluster: {namespaces: [shop, ci]}\n",
		want: "steps[0].checks[0].permissions.subjects[0].must[0].resources[0]: deployments.apps is not asked about; add it to the check's resources",
	}, {
		name: "permissions stated with a verb not asked about",
		bad:  check("      - name: c\n        permissions:\n          subjects:\n            - serviceAccount: ci/deployer\n              may:\n                - {verbs: [bind], resources: [roles.rbac.authorization.k8s.io]} #!\n") + "cluster: {namespaces: [shop, ci]}\n",
		good: check("      - name: c\n        permissions:\n          verbs: [bind]\n          subjects:\n            - serviceAccount: ci/deployer\n              may:\n                - {verbs: [bind], resources: [roles.rbac.authorization.k8s.io]}\n") + "cluster: {namespaces: [shop, ci]}\n",
		want: "steps[0].checks[0].permissions.subjects[0].may[0].verbs[0]: \"bind\" is not asked about",
	}, {
		name: "permissions stated in a namespace the check does not ask about",
		bad:  check("      - name: c\n        permissions:\n          namespaces: [shop]\n          subjects:\n            - serviceAccount: ci/deployer\n              may:\n                - {verbs: [get], resources: [pods], namespaces: [ci]} #!\n") + "cluster: {namespaces: [shop, ci]}\n",
		good: check("      - name: c\n        permissions:\n          namespaces: [shop, ci]\n          subjects:\n            - serviceAccount: ci/deployer\n              may:\n                - {verbs: [get], resources: [pods], namespaces: [ci]}\n") + "cluster: {namespaces: [shop, ci]}\n",
		want: "steps[0].checks[0].permissions.subjects[0].may[0].namespaces[0]: \"ci\" is not one of the check's namespaces",
	}, {
		name: "access check without an identity",
		bad:  check("      - name: c\n        access: {verb: get, resource: secrets, allowed: false} #!\n"),
		good: check("      - name: c\n        access: {user: alice, verb: get, resource: secrets, allowed: false}\n"),
		want: `steps[0].checks[0].access: name the identity asked about: serviceAccount (namespace/name) or user`,
	}, {
		name: "access check with two identities",
		bad:  check("      - name: c\n        access:\n          serviceAccount: ci/deployer\n          user: alice #!\n          verb: get\n          resource: secrets\n          allowed: false\n"),
		good: check("      - name: c\n        access:\n          serviceAccount: ci/deployer\n          verb: get\n          resource: secrets\n          allowed: false\n"),
		want: `steps[0].checks[0].access.user: ask about one identity: serviceAccount or user, not both`,
	}, {
		name: "access check service account",
		bad:  check("      - name: c\n        access:\n          serviceAccount: deployer #!\n          verb: get\n          resource: secrets\n          allowed: false\n"),
		good: check("      - name: c\n        access:\n          serviceAccount: ci/deployer\n          verb: get\n          resource: secrets\n          allowed: false\n"),
		want: `steps[0].checks[0].access.serviceAccount: "deployer" is not namespace/name, e.g. ci/deployer`,
	}, {
		name: "access check groups of a service account",
		bad:  check("      - name: c\n        access:\n          serviceAccount: ci/deployer\n          groups: [admins] #!\n          verb: get\n          resource: secrets\n          allowed: false\n"),
		good: check("      - name: c\n        access:\n          user: bob\n          groups: [admins]\n          verb: get\n          resource: secrets\n          allowed: false\n"),
		want: `steps[0].checks[0].access.groups: a service account's groups are the API server's own`,
	}, {
		name: "access check resource with its group",
		bad:  check("      - name: c\n        access:\n          user: bob\n          verb: patch\n          resource: deployments.apps #!\n          allowed: true\n"),
		good: check("      - name: c\n        access:\n          user: bob\n          verb: patch\n          group: apps\n          resource: deployments\n          allowed: true\n"),
		want: `steps[0].checks[0].access.resource: "deployments.apps" is not a plural resource name; e.g. deployments, with group: apps`,
	}, {
		name: "access check without its answer",
		bad:  check("      - name: c\n        access: {user: bob, verb: get, resource: pods} #!\n"),
		good: check("      - name: c\n        access: {user: bob, verb: get, resource: pods, allowed: true}\n"),
		want: `steps[0].checks[0].access.allowed: missing; say the answer the check requires`,
	}, {
		name: "reach check outside the lab's namespaces",
		bad:  check("      - name: c\n        reach:\n          from: {namespace: other} #!\n          to: db:5432\n          allowed: false\n"),
		good: strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop}\n          to: db:5432\n          allowed: false\n",
		want: `steps[0].checks[0].reach.from.namespace: "other" is not one of the lab's namespaces`,
	}, {
		name: "matrix cell naming no source",
		bad:  matrixLab("          open:\n            - from: [nobody] #!\n              to: [db]\n"),
		good: matrixLab("          open:\n            - from: [web]\n              to: [db]\n"),
		want: `steps[0].checks[0].matrix.open[0].from: "nobody" is none of the check's sources (web)`,
	}, {
		name: "matrix cell both open and closed",
		bad:  matrixLab("          open: [{from: [web], to: [db]}]\n          closed:\n            - {from: ['*'], to: [db]} #!\n"),
		good: matrixLab("          open: [{from: [web], to: [db]}]\n          closed: [{from: ['*'], to: [admin]}]\n"),
		want: `steps[0].checks[0].matrix.closed[0]: the cell from web to db is listed open too`,
	}, {
		name: "matrix without unlisted",
		bad:  strings.Replace(strings.Replace(matrixLab(""), "          unlisted: closed\n", "", 1), "          sources:\n", "          sources: #!\n", 1),
		good: matrixLab(""),
		want: `steps[0].checks[0].matrix.unlisted: missing; say what every cell not listed must be`,
	}, {
		name: "matrix target with to and source",
		bad:  strings.Replace(matrixLab(""), "- {name: admin, to: admin.shop:80}", "- {name: admin, to: admin.shop:80, source: web} #!", 1),
		good: strings.Replace(matrixLab(""), "- {name: admin, to: admin.shop:80}", "- {name: admin, source: web}", 1),
		want: `steps[0].checks[0].matrix.targets[1]: a target is either to (host:port) or source`,
	}, {
		name: "matrix prober port out of range",
		bad:  strings.Replace(matrixLab(""), "- {name: admin, to: admin.shop:80}", "- {name: admin, source: web, port: 65536} #!", 1),
		good: strings.Replace(matrixLab(""), "- {name: admin, to: admin.shop:80}", "- {name: admin, source: web, port: 53}", 1),
		want: `steps[0].checks[0].matrix.targets[1].port: 65536 is not a port; give one of 1-65535`,
	}, {
		name: "matrix port with to",
		bad:  strings.Replace(matrixLab(""), "- {name: admin, to: admin.shop:80}", "- {name: admin, to: admin.shop:80, port: 8080} #!", 1),
		good: strings.Replace(matrixLab(""), "- {name: admin, to: admin.shop:80}", "- {name: admin, to: admin.shop:8080}", 1),
		want: `steps[0].checks[0].matrix.targets[1].port: port goes with source (a prober's port); with to, give the port in host:port`,
	}, {
		name: "matrix without the network policy add-on",
		bad:  strings.Replace(strings.Replace(matrixLab(""), "  addons: [networkPolicy]\n", "", 1), "          sources:\n", "          sources: #!\n", 1),
		good: matrixLab(""),
		want: `steps[0].checks[0].matrix: a matrix check waits for the network policy agent; add networkPolicy to cluster.addons`,
	}, {
		name: "reach check in a declare lab",
		bad:  strings.Replace(strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1), "namespaces: [shop]", "namespaces: [shop]\n  workloads: declare", 1) + "      - name: c\n        reach:\n          from: {namespace: shop} #!\n          to: db:5432\n          allowed: false\n",
		good: strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop}\n          to: db:5432\n          allowed: false\n",
		want: `steps[0].checks[0].reach: a reach check starts a Pod, and a lab with workloads: declare runs none`,
	}, {
		name: "reach check target",
		bad:  strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop}\n          to: http://db:5432 #!\n          allowed: false\n",
		good: strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop}\n          to: 10.96.0.1:443\n          allowed: false\n",
		want: `steps[0].checks[0].reach.to: "http://db:5432" is not host:port`,
	}, {
		name: "reach check port",
		bad:  strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop}\n          to: db.shop:70000 #!\n          allowed: false\n",
		good: strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop}\n          to: db.shop:7000\n          allowed: false\n",
		want: `steps[0].checks[0].reach.to: "70000" is not a port from 1 to 65535`,
	}, {
		name: "reach check label",
		bad:  strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop, labels: {tier: \"a b\"}} #!\n          to: db:5432\n          allowed: false\n",
		good: strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop, labels: {tier: web}}\n          to: db:5432\n          allowed: false\n",
		want: `steps[0].checks[0].reach.from.labels.tier: "a b" is not a label value`,
	}, {
		name: "reach check without its answer",
		bad:  strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop} #!\n          to: db:5432\n",
		good: strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n", 1) + "      - name: c\n        reach:\n          from: {namespace: shop}\n          to: db:5432\n          allowed: true\n",
		want: `steps[0].checks[0].reach.allowed: missing; say what the check requires`,
	}, {
		name: "sandbox namespace",
		bad:  strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop, tools]\nsandbox:\n  namespace: other #!\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		good: strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop, tools]\nsandbox:\n  namespace: tools\n", 1) + "      - {name: c, file: {path: /root/x}}\n",
		want: `sandbox.namespace: "other" is not one of the lab's namespaces`,
	}, {
		name: "audit as",
		bad:  check("      - name: c\n        audit:\n          verbs: [patch]\n          resource: deployments\n          as: deployer #!\n"),
		good: check("      - name: c\n        audit:\n          verbs: [patch]\n          resource: deployments\n          as: ci/deployer\n"),
		want: `steps[0].checks[0].audit.as: "deployer" is not a ServiceAccount's namespace/name, e.g. ci/deployer`,
	}, {
		name: "audit verb",
		bad:  check("      - name: c\n        audit:\n          verbs: [apply, scale] #!\n          resource: deployments\n"),
		good: check("      - name: c\n        audit:\n          verbs: [apply, patch]\n          resource: deployments\n"),
		want: `steps[0].checks[0].audit.verbs[1]: "scale" is not one of`,
	}, {
		name: "audit without a resource",
		bad:  check("      - name: c\n        audit:\n          verbs: [apply] #!\n"),
		good: check("      - name: c\n        audit:\n          verbs: [apply]\n          resource: deployments\n"),
		want: `steps[0].checks[0].audit.resource: missing`,
	}, {
		name: "audit resource not plural lower case",
		bad:  check("      - name: c\n        audit:\n          resource: Deployment #!\n"),
		good: check("      - name: c\n        audit:\n          resource: deployments\n"),
		want: `steps[0].checks[0].audit.resource: "Deployment" is not a resource name`,
	}, {
		name: "audit after without a resource",
		bad:  check("      - name: c\n        audit:\n          resource: deployments\n          after: {verbs: [apply]} #!\n"),
		good: check("      - name: c\n        audit:\n          resource: deployments\n          after: {verbs: [apply], resource: deployments}\n"),
		want: `steps[0].checks[0].audit.after.resource: missing`,
	}, {
		name: "audit afterCommit repository not absolute",
		bad:  check("      - name: c\n        audit:\n          resource: deployments\n          afterCommit: {repo: gitops/repo, touching: a.yaml} #!\n"),
		good: check("      - name: c\n        audit:\n          resource: deployments\n          afterCommit: {repo: /root/gitops/repo, touching: a.yaml}\n"),
		want: `steps[0].checks[0].audit.afterCommit.repo: "gitops/repo" must be an absolute path`,
	}, {
		name: "audit afterCommit repository the grader does not read itself",
		bad:  check("      - name: c\n        audit:\n          resource: deployments\n          afterCommit: {repo: /srv/gitops, touching: a.yaml} #!\n"),
		good: check("      - name: c\n        audit:\n          resource: deployments\n          afterCommit: {repo: /root/gitops/repo, touching: a.yaml}\n"),
		want: `steps[0].checks[0].audit.afterCommit.repo: /srv/gitops is neither in the learner's home (/root) nor in the lab's fixtures`,
	}, {
		name: "audit afterCommit file outside the repository",
		bad:  check("      - name: c\n        audit:\n          resource: deployments\n          afterCommit: {repo: /root/r, touching: ../a.yaml} #!\n"),
		good: check("      - name: c\n        audit:\n          resource: deployments\n          afterCommit: {repo: /root/r, touching: apps/a.yaml}\n"),
		want: `steps[0].checks[0].audit.afterCommit.touching: file "../a.yaml" must name a file inside the repository`,
	}, {
		name: "audit afterCommit without a file",
		bad:  check("      - name: c\n        audit:\n          resource: deployments\n          afterCommit: {repo: /root/r} #!\n"),
		good: check("      - name: c\n        audit:\n          resource: deployments\n          afterCommit: {repo: /root/r, touching: apps/a.yaml}\n"),
		want: `steps[0].checks[0].audit.afterCommit.touching: missing`,
	}, {
		name: "audit request path",
		bad:  check("      - name: c\n        audit:\n          resource: deployments\n          request: {path: 'spec.[', equals: 5} #!\n"),
		good: check("      - name: c\n        audit:\n          resource: deployments\n          request: {path: spec.replicas, equals: 5}\n"),
		want: `steps[0].checks[0].audit.request.path`,
	}, {
		name: "negative timeout",
		bad:  check("      - name: c\n        timeout: -1s #!\n        file: {path: /root/x}\n"),
		good: check("      - name: c\n        timeout: 1s\n        file: {path: /root/x}\n"),
		want: `steps[0].checks[0].timeout: -1s must be positive`,
	}, {
		name: "negative points",
		bad:  check("      - name: c\n        points: -2 #!\n        file: {path: /root/x}\n"),
		good: check("      - name: c\n        points: 2\n        file: {path: /root/x}\n"),
		want: `steps[0].checks[0].points: -2 is negative`,
	}, {
		name: "file.path relative",
		bad:  check("      - name: c\n        file:\n          path: notes.txt #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/notes.txt\n"),
		want: `steps[0].checks[0].file.path: "notes.txt" must be an absolute path (starting with /)`,
	}, {
		name: "file.notInside relative",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          notInside: opt #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          notInside: /opt\n"),
		want: `steps[0].checks[0].file.notInside: "opt" must be an absolute path`,
	}, {
		name: "file.type enum",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          type: folder #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          type: dir\n"),
		want: `steps[0].checks[0].file.type: "folder" is not one of file, dir`,
	}, {
		name: "file.matches regex",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          matches:\n          - ok\n          - \"(unclosed\" #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          matches:\n          - ok\n          - \"(closed)\"\n"),
		want: `steps[0].checks[0].file.matches[1]: not a valid regular expression (RE2 syntax)`,
	}, {
		name: "file.notMatches is RE2, without look-ahead",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          notMatches: [\"a(?=b)\"] #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          notMatches: [\"ab\"]\n"),
		want: `steps[0].checks[0].file.notMatches[0]: not a valid regular expression (RE2 syntax)`,
	}, {
		name: "range min above max",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          lines: {min: 5, max: 2} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          lines: {min: 2, max: 2}\n"),
		want: `steps[0].checks[0].file.lines: min 5 is greater than max 2`,
	}, {
		name: "range negative",
		bad:  check("      - name: c\n        git:\n          repo: /root/r\n          commits: {min: -1} #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/r\n          commits: {min: 0}\n"),
		want: `steps[0].checks[0].git.commits.min: -1 is negative`,
	}, {
		name: "range empty",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          lines: {} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          lines: {max: 3}\n"),
		want: `steps[0].checks[0].file.lines: set min, max or both`,
	}, {
		name: "script name",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          script: {name: hangul, min: 0.5} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          script: {name: Hangul, min: 0.5}\n"),
		want: `steps[0].checks[0].file.script.name: "hangul" is not a Unicode script name; did you mean "Hangul"?`,
	}, {
		name: "script share zero",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          script: {name: Han, min: 0} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          script: {name: Han, min: 1}\n"),
		want: `steps[0].checks[0].file.script.min: 0 must be a share in (0, 1]`,
	}, {
		name: "script share above one",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          script: {name: Han, min: 1.5} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          script: {name: Han, min: 0.01}\n"),
		want: `steps[0].checks[0].file.script.min: 1.5 must be a share in (0, 1]`,
	}, {
		name: "field path syntax",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          field: {path: \"spec..replicas\", equals: 3} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          field: {path: \"spec.replicas\", equals: 3}\n"),
		want: `steps[0].checks[0].file.field.path: field path "spec..replicas" at offset 5: expected a key after the dot`,
	}, {
		name: "field path missing",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          field: {equals: 3} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, equals: 3}\n"),
		want: `steps[0].checks[0].file.field.path: missing`,
	}, {
		name: "field format enum",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, format: toml} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, format: yaml}\n"),
		want: `steps[0].checks[0].file.field.format: "toml" is not one of json, yaml`,
	}, {
		name: "assert type enum",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, type: int} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, type: integer}\n"),
		want: `steps[0].checks[0].file.field.type: "int" is not one of string, number, integer, boolean, object, array, null`,
	}, {
		name: "assert regex",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, notMatches: \"[\"} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, notMatches: \"\\\\[\"}\n"),
		want: `steps[0].checks[0].file.field.notMatches: not a valid regular expression`,
	}, {
		name: "gte is a number",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, gte: three} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, gte: 3}\n"),
		want: `steps[0].checks[0].file.field.gte: gte compares numbers; found three`,
	}, {
		name: "subsetOf is a mapping",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, subsetOf: [a]} #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          field: {path: a, subsetOf: {a: b}}\n"),
		want: `steps[0].checks[0].file.field.subsetOf: expected a mapping`,
	}, {
		name: "reference syntax",
		bad:  check("      - name: c\n        file:\n          path: /root/x\n          equals:\n            ref: \"git:/repo\" #!\n"),
		good: check("      - name: c\n        file:\n          path: /root/x\n          equals:\n            ref: \"git:/root/repo@HEAD\"\n"),
		want: `steps[0].checks[0].file.equals.ref: reference "git:/repo": expected git:/path/to/repo@REV`,
	}, {
		name: "reference in a kube field",
		bad:  check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          name: p\n          field:\n            path: a\n            notEquals: {ref: \"kube:Pod/p#a\"} #!\n"),
		good: check("      - name: c\n        kube:\n          apiVersion: v1\n          kind: Pod\n          name: p\n          field:\n            path: a\n            notEquals: {ref: \"kube:v1/Pod/default/p#a\"}\n"),
		want: `steps[0].checks[0].kube.field.notEquals.ref: reference "kube:Pod/p#a": expected kube:APIVERSION/Kind/NAMESPACE/NAME`,
	}, {
		name: "git.repo relative",
		bad:  check("      - name: c\n        git:\n          repo: gitops/repo #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/gitops/repo\n"),
		want: `steps[0].checks[0].git.repo: "gitops/repo" must be an absolute path`,
	}, {
		name: "git.config key",
		bad:  check("      - name: c\n        git:\n          repo: /root/r\n          config: [username] #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/r\n          config: [user.name]\n"),
		want: `steps[0].checks[0].git.config[0]: "username" is not a git config key such as user.name`,
	}, {
		name: "git.tracked relative to the repository",
		bad:  check("      - name: c\n        git:\n          repo: /root/r\n          tracked: [/r/a.yaml] #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/r\n          tracked: [a.yaml]\n"),
		want: `steps[0].checks[0].git.tracked[0]: file "/r/a.yaml" must be relative to the repository root`,
	}, {
		name: "message.which enum",
		bad:  check("      - name: c\n        git:\n          repo: /root/r\n          message: {which: every} #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/r\n          message: {which: all}\n"),
		want: `steps[0].checks[0].git.message.which: "every" is not one of last, first, any, all`,
	}, {
		name: "message.matches regex",
		bad:  check("      - name: c\n        git:\n          repo: /root/r\n          message: {matches: \"*feat\"} #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/r\n          message: {matches: \"feat\"}\n"),
		want: `steps[0].checks[0].git.message.matches: not a valid regular expression`,
	}, {
		name: "message.minLength",
		bad:  check("      - name: c\n        git:\n          repo: /root/r\n          message: {minLength: -1} #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/r\n          message: {minLength: 1}\n"),
		want: `steps[0].checks[0].git.message.minLength: -1 is negative`,
	}, {
		name: "git.field.file missing",
		bad:  check("      - name: c\n        git:\n          repo: /root/r\n          field: {path: a} #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/r\n          field: {file: a.yaml, path: a}\n"),
		want: `steps[0].checks[0].git.field.file: missing`,
	}, {
		name: "git.field.file escapes the repository",
		bad:  check("      - name: c\n        git:\n          repo: /root/r\n          field: {file: ../a.yaml, path: a} #!\n"),
		good: check("      - name: c\n        git:\n          repo: /root/r\n          field: {file: b/../a.yaml, path: a}\n"),
		want: `steps[0].checks[0].git.field.file: file "../a.yaml" must name a file inside the repository`,
	}, {
		name: "kube needs apiVersion, kind and name",
		bad:  check("      - name: c\n        kube: {namespace: default} #!\n"),
		good: check("      - name: c\n        kube: {apiVersion: v1, kind: Pod, name: p, namespace: default}\n"),
		want: `steps[0].checks[0].kube.apiVersion: missing`,
	}, {
		name: "kube namespace",
		bad:  check("      - name: c\n        kube: {apiVersion: v1, kind: Pod, name: p, namespace: Default} #!\n"),
		good: check("      - name: c\n        kube: {apiVersion: v1, kind: Pod, name: p, namespace: default}\n"),
		want: `steps[0].checks[0].kube.namespace: "Default" is not a DNS label`,
	}, {
		name: "command.run empty",
		bad:  check("      - name: c\n        command: {run: []} #!\n"),
		good: check("      - name: c\n        command: {run: [test, -d, /root]}\n"),
		want: `steps[0].checks[0].command.run: missing`,
	}, {
		name: "command.dir relative",
		bad:  check("      - name: c\n        command: {run: [ls], dir: tmp} #!\n"),
		good: check("      - name: c\n        command: {run: [ls], dir: /tmp}\n"),
		want: `steps[0].checks[0].command.dir: "tmp" must be an absolute path`,
	}, {
		name: "command.exitCode range",
		bad:  check("      - name: c\n        command: {run: [ls], exitCode: 256} #!\n"),
		good: check("      - name: c\n        command: {run: [ls], exitCode: 255}\n"),
		want: `steps[0].checks[0].command.exitCode: 256 is not an exit code (0 to 255)`,
	}, {
		name: "command.stdout regex",
		bad:  check("      - name: c\n        command: {run: [ls], stdout: \"a{2,1}\"} #!\n"),
		good: check("      - name: c\n        command: {run: [ls], stdout: \"a{1,2}\"}\n"),
		want: `steps[0].checks[0].command.stdout: not a valid regular expression`,
	}, {
		name: "kube check that waits longer than a waiting check may",
		bad:  check("      - name: c\n        timeout: 1000h #!\n        kube: {apiVersion: v1, kind: Pod, name: p, namespace: a, wait: true, field: {path: status.phase, equals: Running}}\n"),
		good: check("      - name: c\n        timeout: 10m\n        kube: {apiVersion: v1, kind: Pod, name: p, namespace: a, wait: true, field: {path: status.phase, equals: Running}}\n"),
		want: `steps[0].checks[0].timeout: 1000h0m0s is longer than a kube check with wait may read again (10m0s)`,
	}, {
		name: "mistake names a check that does not exist",
		bad:  check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [c, d] #!\n"),
		good: check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [c]\n"),
		want: `steps[0].mistakes[0].fails[1]: step "s1" has no check "d"; it has "c"`,
	}, {
		name: "mistake with empty fails",
		bad:  check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [] #!\n"),
		good: check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [c]\n"),
		want: `steps[0].mistakes[0].fails: name at least one check`,
	}, {
		name: "mistake without a script",
		bad:  check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m #!\n      fails: [c]\n"),
		good: check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [c]\n"),
		want: `steps[0].mistakes[0].script: missing`,
	}, {
		name: "mistake names twice",
		bad:  check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - {name: m, script: a, fails: [c]}\n    - {name: m, script: b, fails: [c]} #!\n"),
		good: check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - {name: m, script: a, fails: [c]}\n    - {name: n, script: b, fails: [c]}\n"),
		want: `steps[0].mistakes[1].name: mistake name "m" is used twice in this step (first at line 13)`,
	}, {
		name: "mistake evidence is a check",
		bad:  check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [c]\n      evidence:\n      - {name: e, file: {path: /root/x, lines: {min: 3, max: 1}}} #!\n"),
		good: check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [c]\n      evidence:\n      - {name: e, file: {path: /root/x, lines: {min: 1, max: 3}}}\n"),
		want: `steps[0].mistakes[0].evidence[0].file.lines`,
	}, {
		name: "mistake evidence reads where the grader sees",
		bad:  check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [c]\n      evidence:\n      - {name: e, git: {repo: /proc/1/root/repo}} #!\n"),
		good: check("      - {name: c, file: {path: /root/x}}\n    mistakes:\n    - name: m\n      script: rm /x\n      fails: [c]\n      evidence:\n      - {name: e, git: {repo: /etc}}\n"),
		want: `steps[0].mistakes[0].evidence[0].git.repo: /proc/1/root/repo is in /proc, which no check can read`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse("t.yaml", []byte(tt.good)); err != nil {
				t.Fatalf("the good lab has problems:\n%v", err)
			}
			line := markedLine(t, tt.bad)
			got := problems(t, tt.bad)
			want := fmt.Sprintf("t.yaml:%d:", line)
			for _, p := range got {
				if strings.HasPrefix(p, want) && strings.Contains(p, " "+tt.want) {
					return
				}
			}
			t.Errorf("no problem %s...%s among:\n  %s", want, tt.want, strings.Join(got, "\n  "))
		})
	}
}

// markedLine returns the 1-based number of the line holding "#!".
func markedLine(t *testing.T, src string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, "#!") {
			return i + 1
		}
	}
	t.Fatal("the bad lab marks no line with #!")
	return 0
}

func TestValidateWithoutPositions(t *testing.T) {
	l := &Lab{APIVersion: APIVersion, Kind: Kind, Metadata: Metadata{Name: "go-built"}}
	l.Steps = []Step{{ID: "a", Title: "A", Instructions: "I", Solve: "S",
		Checks: []Check{{Name: "c", File: &FileCheck{Path: "relative"}}}}}
	l.Default()
	err := l.Validate()
	want := `steps[0].checks[0].file.path: "relative" must be an absolute path (starting with /)`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v, want %s", err, want)
	}
	l.Steps[0].Checks[0].File.Path = "/root/abs"
	if err := l.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want nil", err)
	}
	if _, _, _, ok := l.Position("steps[0]"); ok {
		t.Error("Position reported a position for a lab built in Go")
	}
}

// TestChecksReadWhatTheGraderSees: the grader mounts only the learner's
// home and the lab's fixtures. A file check of any other path of the
// sandbox, and a git check or a reference of any other repository, is
// read from the host's side, so it loads; /proc, /sys and /dev are never
// read: those are refused at load.
func TestChecksReadWhatTheGraderSees(t *testing.T) {
	for _, tc := range []struct {
		check string
		bad   string // the field refused, "" when the check is fine
		says  string
	}{
		{"{name: c, file: {path: /root/notes.txt}}", "", ""},
		{"{name: c, file: {path: /opt/lab/fixtures/app.yaml}}", "", ""},
		{"{name: c, file: {path: /root}}", "", ""},
		{"{name: c, file: {path: /etc/motd}}", "", ""},
		{"{name: c, file: {path: /rootkit/x}}", "", ""},
		{"{name: c, file: {path: /root/../etc/shadow}}", "", ""},
		{"{name: c, file: {path: /var/dont-need-this.png, exists: false}}", "", ""},
		{"{name: c, file: {path: /opt/course/1/answer, contains: ['42']}}", "", ""},
		{"{name: c, file: {path: /tmp/out.txt, type: file}}", "", ""},
		{"{name: c, file: {path: /proc/1/environ}}", "steps[0].checks[0].file.path", "is in /proc, which no check can read"},
		{"{name: c, file: {path: /sys/kernel/x, exists: false}}", "steps[0].checks[0].file.path", "is in /sys, which no check can read"},
		{"{name: c, file: {path: /dev}}", "steps[0].checks[0].file.path", "is in /dev, which no check can read"},
		{"{name: c, file: {path: /tmp/../proc/self/root}}", "steps[0].checks[0].file.path", "is in /proc"},
		{"{name: c, git: {repo: /srv/repo}}", "", ""},
		{"{name: c, git: {repo: /etc, commits: {min: 1}}}", "", ""},
		{"{name: c, git: {repo: /proc/1/root/srv/app}}", "steps[0].checks[0].git.repo", "is in /proc, which no check can read"},
		{"{name: c, git: {repo: /sys}}", "steps[0].checks[0].git.repo", "is in /sys, which no check can read"},
		{"{name: c, file: {path: /root/a, equals: {ref: 'file:/etc/hostname'}}}", "", ""},
		{"{name: c, file: {path: /root/a, equals: {ref: 'file:/proc/1/environ'}}}", "steps[0].checks[0].file.equals.ref", "is in /proc, which no check can read"},
		{"{name: c, kube: {apiVersion: v1, kind: Pod, name: p, field: {path: a, equals: {ref: 'git:/tmp/repo@HEAD:x.yaml#a'}}}}", "", ""},
		{"{name: c, kube: {apiVersion: v1, kind: Pod, name: p, field: {path: a, equals: {ref: 'git:/dev/repo@HEAD:x.yaml#a'}}}}", "steps[0].checks[0].kube.field.equals.ref", "is in /dev, which no check can read"},
		{"{name: c, kube: {apiVersion: v1, kind: Pod, name: p, field: {path: a, equals: {ref: 'git:/root/repo@HEAD:x.yaml#a'}}}}", "", ""},
		{"{name: c, command: {run: [test, -f, /etc/motd]}}", "", ""},
	} {
		src := "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata: {name: t}\nsteps:\n  - id: s\n    title: S\n    instructions: I\n    solve: \"true\"\n    checks:\n      - " + tc.check + "\n"
		_, err := Parse("t.yaml", []byte(src))
		var errs Errors
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s: %v", tc.check, err)
		case tc.bad != "" && (!errors.As(err, &errs) || len(errs) != 1 || errs[0].Path != tc.bad || !strings.Contains(errs[0].Msg, tc.says)):
			t.Errorf("%s: %v, want one error at %s saying %q", tc.check, err, tc.bad, tc.says)
		}
	}
}

// matrixLab is a lab with one matrix check, web in shop to db and admin,
// with cells after the targets.
func matrixLab(cells string) string {
	return strings.Replace(header, "name: t\n", "name: t\ncluster:\n  namespaces: [shop]\n  addons: [networkPolicy]\n", 1) +
		"      - name: c\n        matrix:\n          sources:\n            - {name: web, namespace: shop, labels: {tier: web}}\n" +
		"          targets:\n            - {name: db, to: db.shop:5432}\n            - {name: admin, to: admin.shop:80}\n" +
		cells + "          unlisted: closed\n"
}

// ParseTaint is the one reader of a taint: a lab's worker taints and a
// class's --toleration. Its errors say which part is wrong.
func TestParseTaint(t *testing.T) {
	for s, want := range map[string]Taint{
		"dedicated=db:NoSchedule": {Key: "dedicated", Value: "db", Effect: "NoSchedule", Valued: true},
		"dedicated=:NoExecute":    {Key: "dedicated", Effect: "NoExecute", Valued: true},
		"gpu:PreferNoSchedule":    {Key: "gpu", Effect: "PreferNoSchedule"},
	} {
		if got, err := ParseTaint(s); err != nil || got != want {
			t.Errorf("ParseTaint(%q) = %+v, %v, want %+v", s, got, err, want)
		}
	}
	for s, want := range map[string]struct{ part, msg string }{
		"gpu":                     {"effect", `taint "gpu" has no effect: write key=value:NoSchedule (or PreferNoSchedule, NoExecute)`},
		"gpu:Never":               {"effect", `taint "gpu:Never": "Never" is not an effect; use NoSchedule, PreferNoSchedule or NoExecute`},
		"=db:NoSchedule":          {"key", `taint "=db:NoSchedule": "" is not a taint key: `},
		"a b=db:NoSchedule":       {"key", `taint "a b=db:NoSchedule": "a b" is not a taint key: `},
		"dedicated=d b:NoExecute": {"value", `taint "dedicated=d b:NoExecute": "d b" is not a taint value: `},
	} {
		_, err := ParseTaint(s)
		var te *TaintError
		if !errors.As(err, &te) || te.Part != want.part || !strings.HasPrefix(err.Error(), want.msg) {
			t.Errorf("ParseTaint(%q): %v (%+v), want part %s, %s", s, err, te, want.part, want.msg)
		}
	}
}
