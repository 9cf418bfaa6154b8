package importer

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// shown is a check in one line, to compare: what it reads and asserts.
func shown(c check) string {
	switch {
	case c.Kube != nil:
		k := c.Kube
		s := fmt.Sprintf("kube %s %s/%s", k.Kind, k.Namespace, k.Name)
		if k.Wait {
			s = "waiting " + c.Timeout + " " + s
		}
		switch {
		case k.Selector != nil && k.Count != nil:
			return s + fmt.Sprintf("-l %q count %s..%s", *k.Selector, intText(k.Count.Min), intText(k.Count.Max))
		case k.Field != nil && k.Field.Equals != nil:
			return s + fmt.Sprintf(" %s = %#v", k.Field.Path, k.Field.Equals)
		case k.Field != nil && (k.Field.GTE != nil || k.Field.LTE != nil):
			return s + fmt.Sprintf(" %s %s in %s..%s", k.Field.Path, k.Field.Type, int64Text(k.Field.GTE), int64Text(k.Field.LTE))
		case k.Field != nil:
			return s + fmt.Sprintf(" %s ~ %s", k.Field.Path, k.Field.Matches)
		case k.Exists != nil && !*k.Exists:
			return s + " gone"
		}
		return s + " exists"
	case c.File != nil:
		f := c.File
		s := "file " + f.Path
		switch {
		case f.Exists != nil && !*f.Exists:
			return s + " gone"
		case len(f.Matches) > 0:
			return s + " ~ " + strings.Join(f.Matches, ", ")
		case f.Type != "":
			return s + " " + f.Type
		}
		return s + " exists"
	case c.Command != nil:
		return "command"
	}
	return "?"
}

func intText(n *int) string {
	if n == nil {
		return ""
	}
	return fmt.Sprint(*n)
}

func int64Text(n *int64) string {
	if n == nil {
		return ""
	}
	return fmt.Sprint(*n)
}

// Verify scripts as the public scenarios write them (excerpts of
// killercoda/scenarios-kubernetes, killercoda/scenarios-helm and
// instruqt/examples), and the forms the scenarios use, read statement by
// statement: each statement that asserts what typed checks read becomes
// them, exactly; the rest stays in one command check with the constants
// and captures it reads; what asserts nothing becomes nothing.
func TestMapVerifyLineByLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		want   []string
		// rest is what the command check must run (each line in it),
		// and lack.
		rest, notRest []string
		// timeout is the command check's.
		timeout time.Duration
		note    string
	}{
		{
			name: "scenarios-kubernetes deployment-basics step2: jq prints a number, -eq compares it",
			script: "#!/bin/bash\n\nNUM_REP=$(kubectl get deployment my-first-deployment -o json | jq .spec.replicas)\n\n" +
				"if [ \"$NUM_REP\" -eq \"3\" ]; then\n    exit 0\nelse\n    exit 1\nfi\n",
			want: []string{"kube Deployment lab/my-first-deployment spec.replicas = 3"},
			note: "lines 5-9 (with line 3) became check deployment-my-first-deployment-spec-replicas",
		},
		{
			name: "scenarios-kubernetes deployment-basics step4: jq prints a string quoted",
			script: "#!/bin/bash\n  \nIMAGE=$(kubectl get deployment my-first-deployment -o json | jq .spec.template.spec.containers[0].image)\n\n" +
				"if [ \"$IMAGE\" = \"\\\"httpd:alpine\\\"\" ]; then\n    exit 0\nelse\n    exit 1\nfi",
			want: []string{`kube Deployment lab/my-first-deployment spec.template.spec.containers[0].image = "httpd:alpine"`},
		},
		{
			name: "scenarios-kubernetes persistentVolumes step1: three fields in one [[ && ]], an unchecked line first",
			script: "#!/bin/bash\n\nkubectl get persistentvolume cool-volume\n\n" +
				"SIZE=$(kubectl get persistentvolume cool-volume -o json | jq -r .spec.capacity.storage)\n" +
				"HOSTPATH=$(kubectl get persistentvolume cool-volume -o json | jq -r .spec.hostPath.path)\n" +
				"CLASS=$(kubectl get persistentvolume cool-volume -o json | jq -r .spec.storageClassName)\n\n" +
				"if [[ $SIZE = \"100Mi\" && $HOSTPATH = \"/tmp/my-cool-vol\" && $CLASS = \"manual\" ]]; then\n    exit 0\nelse\n    exit 1\nfi\n",
			want: []string{
				`kube PersistentVolume /cool-volume spec.capacity.storage = "100Mi"`,
				`kube PersistentVolume /cool-volume spec.hostPath.path = "/tmp/my-cool-vol"`,
				`kube PersistentVolume /cool-volume spec.storageClassName = "manual"`,
			},
			note: "line 3 (`kubectl get persistentvolume cool-volume`) asserts nothing in the source",
		},
		{
			name: "scenarios-kubernetes persistentVolumes step2: -eq on a word holds always, and stays",
			script: "#!/bin/bash\n\nif ! kubectl get pvc my-claim; then exit 1; fi\n\nSTATE=$(kubectl get pvc my-claim -o json | jq -r .status.phase)\n\n" +
				"if [[ \"$STATE\" -eq \"Bound\" ]]; then\n    exit 0\nelse\n    exit 1\nfi\n",
			want:    []string{"kube PersistentVolumeClaim lab/my-claim exists", "command"},
			rest:    []string{"STATE=$(kubectl get pvc my-claim -o json | jq -r .status.phase)", `if [[ "$STATE" -eq "Bound" ]]; then`},
			notRest: []string{"kubectl get pvc my-claim;"},
			note:    `it compares with -eq, which reads "Bound" as arithmetic`,
		},
		{
			name:   "scenarios-kubernetes persistentVolumes step5: objects gone",
			script: "#!/bin/bash\n\nif kubectl get pod pvc-user; then exit 1; fi\nif kubectl get pvc my-claim; then exit 1; fi\nif kubectl get pv cool-volume; then exit 1; fi\n",
			want:   []string{"kube Pod lab/pvc-user gone", "kube PersistentVolumeClaim lab/my-claim gone", "kube PersistentVolume /cool-volume gone"},
		},
		{
			name: "instruqt/examples create-and-clone-a-git-repository 03: a constant, a directory, the rest",
			script: "#!/bin/bash\n\nREPODIR=\"my-repo\"\nif [ ! -d $REPODIR ]; then\n  echo \"DIAG: There is no directory called $REPODIR.\"\n  exit 1\nfi\n\n" +
				"pushd $REPODIR\ngit rev-parse --is-inside-work-tree >/dev/null 2>&1\nif [ ! $? -eq 0 ]; then\n  echo \"DIAG: There seems to be no git repository.\"\n  exit 1\nfi\npopd\n\nexit 0\n",
			want:    []string{"file /root/my-repo dir", "command"},
			rest:    []string{"REPODIR=\"my-repo\"", "pushd $REPODIR", "if [ ! $? -eq 0 ]; then", "exit 0"},
			notRest: []string{"-d $REPODIR"},
		},
		{
			name: "scenarios-helm conditional-deployment step2: a { } group to a log stays whole, its log on standard error",
			script: "#!/bin/bash\nLOGFILE=/ks/step2-verify.log\n{\n    set +e\n    if kubectl get hpa -n prod-ns | grep -q hpa; then\n        echo \"HPA is deployed.\"\n    else\n        exit 1\n    fi\n" +
				"} >> ${LOGFILE} 2>&1\necho \"done\" # let Validator know success\n",
			want: []string{"command"},
			rest: []string{"LOGFILE=/ks/step2-verify.log", "} >&2 2>&1", `echo "done"`},
		},
		{
			name:   "instruqt/examples persist-shell-session: a check that only prints checks nothing",
			script: "#!/bin/sh\n#\n# This script runs when the platform check the challenge.\n#\n\necho \"This is the check script\"\n\nexit 0\n",
			want:   nil,
		},
		{
			name:   "constants substituted where they are read",
			script: "#!/bin/bash\nNS=web\nDEPLOY=nginx\nkubectl get deploy $DEPLOY -n \"$NS\" || exit 1\nkubectl -n ${NS} get svc ${DEPLOY} >/dev/null 2>&1 || exit 1\n",
			want:   []string{"kube Deployment web/nginx exists", "kube Service web/nginx exists"},
		},
		{
			name:   "a fail function",
			script: "#!/bin/bash\nfail() { echo \"FAIL: $1\"; exit 1; }\nkubectl get cm app || fail \"no ConfigMap app\"\n",
			want:   []string{"kube ConfigMap lab/app exists"},
		},
		{
			name: "a string field compared as a string, with [[ ]], [ ] and test",
			script: "X=$(kubectl get cm app -n web -o jsonpath='{.data.mode}')\nN=$(kubectl get cm app -n web -o jsonpath='{.data.n}')\nR=$(kubectl get deploy app -n web -o jsonpath='{.spec.replicas}')\n" +
				"[[ $X == production ]] || exit 1\ntest \"$N\" = \"3\" || exit 1\n[ \"$R\" -eq 2 ] || exit 1\n",
			want: []string{`kube ConfigMap web/app data.mode = "production"`, `kube ConfigMap web/app data.n = "3"`, "kube Deployment web/app spec.replicas = 2"},
		},
		{
			name:   "-eq on a string field is no exact check",
			script: "N=$(kubectl get cm app -o jsonpath='{.data.n}')\n[ \"$N\" -eq 3 ] || exit 1\n",
			want:   []string{"command"},
		},
		{
			// The line of killercoda/scenario-examples
			// network-traffic-kubernetes/step1.md, as a verify script's
			// last line: kubectl matches the condition's type in any case,
			// and waits 30s without --timeout.
			name:   "scenario-examples network-traffic-kubernetes: kubectl wait for a condition, its type in lower case",
			script: "#!/bin/bash\nkubectl wait --for=condition=ready pod nginx\n",
			want:   []string{`waiting 33s kube Pod lab/nginx status.conditions[?(@.type=="Ready")].status = "True"`},
			note:   "line 2 became check pod-nginx-ready",
		},
		{
			name:   "kubectl wait with its timeout, then a field",
			script: "kubectl wait --for=condition=Ready pod/web --timeout=60s || exit 1\nkubectl get pod web -o json | jq -e '.spec.nodeName == \"node1\"'\n",
			want:   []string{`waiting 1m3s kube Pod lab/web status.conditions[?(@.type=="Ready")].status = "True"`, `kube Pod lab/web spec.nodeName = "node1"`},
		},
		{
			// The Deployment of killercoda/scenarios-kubernetes
			// deployment-basics, waited for as kubectl wait's own example
			// writes it: a condition's status other than True, -n.
			name:   "kubectl wait for a condition's status, in a namespace",
			script: "set -e\nkubectl wait --for=condition=Available=false deployment/my-first-deployment -n web --timeout=2m\n",
			want:   []string{`waiting 2m3s kube Deployment web/my-first-deployment status.conditions[?(@.type=="Available")].status = "False"`},
		},
		{
			// The claim and field of killercoda/scenarios-kubernetes
			// persistentVolumes/step2/verify.sh (STATE=$(kubectl get pvc
			// my-claim -o json | jq -r .status.phase)), waited for with
			// --for=jsonpath as public scripts write it.
			name:   "scenarios-kubernetes persistentVolumes step2: kubectl wait --for=jsonpath",
			script: "kubectl wait --for=jsonpath='{.status.phase}'=Bound pvc/my-claim --timeout=180s || exit 1\n",
			want:   []string{`waiting 3m3s kube PersistentVolumeClaim lab/my-claim status.phase = "Bound"`},
		},
		{
			name:   "kubectl wait --for=delete, --timeout=0 reads once",
			script: "kubectl wait --for=delete pod/nginx --timeout=60s || exit 1\nkubectl wait --for=delete pod/httpd --timeout=0 || exit 1\n",
			want:   []string{"waiting 1m3s kube Pod lab/nginx gone", "kube Pod lab/httpd gone"},
		},
		{
			name:    "kubectl wait with a selector stays, with its timeout",
			script:  "kubectl get pod nginx || exit 1\nkubectl wait --for=condition=ready pod -l app=nginx --timeout=60s || exit 1\n",
			want:    []string{"kube Pod lab/nginx exists", "command"},
			rest:    []string{"kubectl wait --for=condition=ready pod -l app=nginx --timeout=60s || exit 1"},
			timeout: 70 * time.Second,
			note:    "judges the values of all of them together",
		},
		{
			name:   "kubectl wait for a condition no such object has stays",
			script: "kubectl wait --for=condition=Established crd/widgets.example.com\n",
			want:   []string{"command"},
		},
		{
			name:   "kubectl wait for a condition whose spelling is not known stays",
			script: "kubectl get pod nginx || exit 1\nkubectl wait --for=condition=bound pvc/my-claim\n",
			want:   []string{"kube Pod lab/nginx exists", "command"},
			note:   "kubectl matches the condition's type in any case",
		},
		{
			// The Deployment of killercoda/scenarios-kubernetes
			// deployment-basics step2 (NUM_REP=$(kubectl get deployment
			// my-first-deployment -o json | jq .spec.replicas)), tested
			// with jq -e as public verify scripts do.
			name: "scenarios-kubernetes deployment-basics: jq -e compares an integer field",
			script: "set -e\nkubectl get deployment my-first-deployment -o json | jq -e '.spec.replicas >= 2'\n" +
				"kubectl get deployment my-first-deployment -o json | jq -e '.status.readyReplicas > 2' >/dev/null\n" +
				"kubectl get deployment my-first-deployment -o json | jq -e '.status.readyReplicas == 3'\n",
			want: []string{
				"kube Deployment lab/my-first-deployment spec.replicas integer in 2..",
				"kube Deployment lab/my-first-deployment status.readyReplicas integer in 3..",
				"kube Deployment lab/my-first-deployment status.readyReplicas = 3",
			},
		},
		{
			name: "jq -e counts a list's items",
			script: "kubectl get pods -l app=web -o json | jq -e '.items | length == 2' || exit 1\n" +
				"kubectl get deploy -n web -o json | jq -e '.items | length >= 1' || exit 1\n" +
				"kubectl get svc -o json | jq -e '.items|length < 3' || exit 1\n" +
				"kubectl get deploy web -o json | jq -e '.spec.template.spec.containers[0].name == \"length\"' || exit 1\n",
			want: []string{
				`kube Pod lab/-l "app=web" count 2..2`,
				`kube Deployment web/-l "" count 1..`,
				`kube Service lab/-l "" count 0..2`,
				`kube Deployment lab/web spec.template.spec.containers[0].name = "length"`,
			},
		},
		{
			name:   "jq -e that no check says exactly stays",
			script: "set -e\nkubectl get deploy web\nkubectl get deploy web -o json | jq -e '.spec.replicas != 2'\nkubectl get cm app -o json | jq -e '.data.n >= 2'\n",
			want:   []string{"kube Deployment lab/web exists", "command"},
			note:   "jq's != holds for a field that is missing",
		},
		{
			name:   "jq -e compares a number and a string",
			script: "set -e\nkubectl get deploy web -o json | jq -e '.spec.replicas == 3'\nk get deploy web -o json | jq -e '.metadata.labels.tier == \"front\"'\n",
			want:   []string{"kube Deployment lab/web spec.replicas = 3", `kube Deployment lab/web metadata.labels.tier = "front"`},
		},
		{
			name:   "grep -q over a file under /root",
			script: "grep -q \"listen 8080\" /root/nginx.conf || exit 1\nif ! grep -qi ready status.txt; then exit 1; fi\n",
			want:   []string{"file /root/nginx.conf ~ listen 8080", "file /root/status.txt ~ (?i)ready"},
		},
		{
			name:   "an early success leaves what follows unread",
			script: "if kubectl get pod a; then exit 0; fi\nkubectl get pod b\n",
			want:   []string{"command"},
		},
		{
			name:   "a line that cannot fail the script adds nothing",
			script: "kubectl exec web -- ls /data\nkubectl get pod web\n",
			want:   []string{"kube Pod lab/web exists"},
			note:   "cannot fail the script",
		},
		{
			name:    "under set -e the rest keeps set -e, and its last line is no longer the script's",
			script:  "set -e\nkubectl exec web -- ls /data\nkubectl get pod web\n",
			want:    []string{"kube Pod lab/web exists", "command"},
			rest:    []string{"set -e", "kubectl exec web -- ls /data", "exit 0"},
			notRest: []string{"get pod web"},
		},
		{
			name:   "a negative comparison is no field check (a missing field passes it)",
			script: "X=$(kubectl get cm app -o jsonpath='{.data.mode}')\nif [ \"$X\" = \"debug\" ]; then exit 1; fi\n",
			want:   []string{"command"},
		},
		{
			name:   "! binds to the first command of a list",
			script: "if ! kubectl get pod a && kubectl get pod b; then exit 1; fi\n",
			want:   []string{"command"},
		},
		{
			name:   "! before [[ ]] negates the whole test",
			script: "A=$(kubectl get cm a -o jsonpath='{.data.x}')\nif ! [[ $A == x && $A == x ]]; then exit 1; fi\n",
			want:   []string{`kube ConfigMap lab/a data.x = "x"`, `kube ConfigMap lab/a data.x = "x"`},
		},
		{
			name:   "after cd a relative path is not under /root",
			script: "stat /root/app || exit 1\ncd /root/app || exit 1\nstat config.yaml || exit 1\n",
			want:   []string{"file /root/app exists", "command"},
			rest:   []string{"cd /root/app || exit 1", "stat config.yaml || exit 1"},
		},
		{
			name:   "a script that redefines kubectl or its kubeconfig stays whole",
			script: "export KUBECONFIG=/root/.kube/other\nkubectl get pod web\n",
			want:   []string{"command"},
		},
		{
			name:   "under set -e a capture no check reads still asserts its command",
			script: "set -e\nIP=$(kubectl get svc web -o jsonpath='{.spec.clusterIP}')\nkubectl get pod web\n",
			want:   []string{"kube Pod lab/web exists", "command"},
			rest:   []string{"IP=$(kubectl get svc web"},
		},
		{
			name:   "the k alias in the command check is a function (a script sees no aliases)",
			script: "k exec web -- ls /data || exit 1\nk get pod web\n",
			want:   []string{"kube Pod lab/web exists", "command"},
			rest:   []string{"k() { kubectl \"$@\"; }\n", "k exec web -- ls /data || exit 1"},
		},
		{
			name:   "cat of a path asserts a file, and if cat P; then exit 1 is no absence",
			script: "cat /root/out.txt >/dev/null || exit 1\nif cat /root/old.txt; then exit 1; fi\n",
			want:   []string{"file /root/out.txt file", "command"},
		},
		{
			name:   "a loop's variable is no constant",
			script: "NS=a\nfor NS in b c; do :; done\nkubectl get pod web -n $NS || exit 1\n",
			want:   []string{"command"},
		},
		{
			name:   "a variable set twice is no constant",
			script: "NS=a\nNS=b\nkubectl get pod web -n $NS || exit 1\n",
			want:   []string{"command"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := mapVerify(tc.script, "lab")
			var got []string
			var rest *check
			for i, c := range vm.checks {
				got = append(got, shown(c))
				if c.Command != nil {
					rest = &vm.checks[i]
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("checks:\n%s\nwant:\n%s\nnotes: %q", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), vm.notes)
			}
			if rest != nil {
				run := rest.Command.Run[len(rest.Command.Run)-1]
				for _, want := range tc.rest {
					if !strings.Contains(run, want) {
						t.Errorf("the command check lacks %q:\n%s", want, run)
					}
				}
				for _, no := range tc.notRest {
					if strings.Contains(run, no) {
						t.Errorf("the command check still runs %q, which became a typed check:\n%s", no, run)
					}
				}
				if rest.Command.Dir != "/root" {
					t.Errorf("the command check runs in %q, want /root", rest.Command.Dir)
				}
				if tc.timeout > 0 && rest.Timeout != tc.timeout.String() {
					t.Errorf("the command check's timeout = %q, want %s", rest.Timeout, tc.timeout)
				}
			}
			if tc.note != "" && !strings.Contains(strings.Join(vm.notes, "\n"), tc.note) {
				t.Errorf("notes lack %q: %q", tc.note, vm.notes)
			}
		})
	}
}

// Whatever a verify script holds, reading it ends, and its checks have
// names of their own.
func FuzzMapVerify(f *testing.F) {
	for _, s := range []string{
		"kubectl get pod a\n",
		"if [[ \"$S\" -eq \"Bound\" ]]; then\n exit 0\nelse\n exit 1\nfi\n",
		"X=$(kubectl get cm a -o json | jq -r .data.x)\n[ \"$X\" = \"y\" ] || { echo no; exit 1; }\n",
		"fail() { echo \"$1\"; exit 1; }\ngrep -q a /root/x || fail x\n{\n set -e\n}\n",
		"NS=web\nkubectl get deploy a -n $NS && exit 1\n",
		"if \"'\n",
		"}\n",
		"kubectl wait --for=condition=ready pod nginx --timeout=1m\n",
		"kubectl wait --for=jsonpath='{.status.phase}'=Bound pvc/a || exit 1\nkubectl get pods -l app=web -o json | jq -e '.items | length >= 2'\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		vm := mapVerify(script, "lab")
		names := map[string]bool{}
		for _, c := range vm.checks {
			if names[c.Name] {
				t.Fatalf("two checks named %s", c.Name)
			}
			names[c.Name] = true
		}
	})
}
