package lab

import (
	"slices"
	"strings"
	"testing"
)

func TestKubeReads(t *testing.T) {
	src := header + `      - name: deploy
        kube:
          apiVersion: apps/v1
          kind: Deployment
          namespace: team-a
          name: web
          field: {path: spec.replicas, equals: {ref: 'kube:v1/ConfigMap/team-a/settings#data.replicas'}}
      - name: same-deploy-again
        kube: {apiVersion: apps/v1, kind: Deployment, namespace: team-a, name: web, labels: {app: web}}
      - name: namespace
        kube: {apiVersion: v1, kind: Namespace, name: team-a}
      - name: file-against-cluster
        file:
          path: /root/out.txt
          equals: {ref: 'kube:apps/v1/Deployment/team-a/web#metadata.name'}
      - name: git-against-cluster
        git:
          repo: /root/repo
          field:
            file: svc.yaml
            path: spec.ports
            subsetOf: {ref: 'kube:v1/Service/team-b/api#spec'}
            notEquals: {ref: 'git:/root/repo@HEAD:svc.yaml#spec'}
      - name: file-against-file
        file: {path: /root/a, field: {path: a, gte: {ref: 'file:/root/b#b'}, lte: {ref: 'kube:v1/ConfigMap/team-a/limits#data.max'}}}
`
	l, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range l.KubeReads() {
		got = append(got, r.String())
	}
	want := []string{
		"apps/v1 Deployment team-a/web",
		"v1 ConfigMap team-a/limits",
		"v1 ConfigMap team-a/settings",
		"v1 Namespace team-a",
		"v1 Service team-b/api",
	}
	if !slices.Equal(got, want) {
		t.Errorf("KubeReads:\n got %s\nwant %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
}

func TestKubeReadsNone(t *testing.T) {
	l, err := Parse("t.yaml", []byte(header+"      - {name: c, file: {path: /root/x, equals: {ref: 'file:/root/y'}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if reads := l.KubeReads(); len(reads) != 0 {
		t.Errorf("a lab without kube checks or references reads %v", reads)
	}
}

func TestLintPrivilegedPodSecurity(t *testing.T) {
	for _, level := range []string{"", "baseline", "restricted", "privileged"} {
		src := strings.Replace(lintLab, "%s", "Make apps/web/deployment.yaml in the repository, Deployment web in team-a.", 1)
		if level != "" {
			src += "cluster: {podSecurity: " + level + "}\n"
		}
		l, err := Parse("lab.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		var warned []Warning
		for _, w := range l.Lint() {
			if w.Path == "cluster.podSecurity" {
				warned = append(warned, w)
			}
		}
		if level != "privileged" {
			if len(warned) > 0 {
				t.Errorf("podSecurity %q: warned %v", level, warned)
			}
			continue
		}
		if len(warned) != 1 || warned[0].Line == 0 || !strings.Contains(warned[0].Msg, "root on the cluster's node") {
			t.Errorf("podSecurity privileged: warnings %v, want one naming the risk at its line", warned)
		}
	}
}

func TestLintAccessWritingNamespaces(t *testing.T) {
	src := strings.Replace(lintLab, "%s", "Make apps/web/deployment.yaml in the repository, Deployment web in team-a.", 1) + `access:
  rules:
    - {apiGroups: [""], resources: [pods, namespaces], verbs: [get, patch]}
    - {apiGroups: [""], resources: [namespaces], verbs: [get, list, watch]}
    - {apiGroups: [apps], resources: ["*"], verbs: ["*"]}
  clusterRules:
    - {apiGroups: ["*"], resources: ["*"], verbs: [update]}
`
	l, err := Parse("lab.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range l.Lint() {
		if strings.HasPrefix(w.Path, "access.") {
			got = append(got, w.Path)
		}
	}
	if want := []string{"access.rules[0]", "access.clusterRules[0]"}; !slices.Equal(got, want) {
		t.Errorf("warned about %v, want %v", got, want)
	}
}
