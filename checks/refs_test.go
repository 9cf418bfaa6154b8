package checks

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

func TestReferencesAcrossSources(t *testing.T) {
	root := gitRoot(t)
	head := strings.TrimSpace(gitBin(t, filepath.Join(root, "root/repo"), "rev-parse", "HEAD"))
	short := head[:7]
	writeFile(t, root, "/root/out/sync-report.json", `{"repo_commit": "`+head+`", "short": "`+short+`", "replicas": 3}`, 0o644)
	writeFile(t, root, "/root/out/commit.txt", head+"\n", 0o644)
	writeFile(t, root, "/root/out/local.yaml", "spec:\n  replicas: 2\n  min: 1\n  labels: {app: web}\n", 0o644)
	writeFile(t, root, "/root/out/broken.json", `{"repo_commit": `, 0o644)
	env := Env{Root: root, Kube: fakeCluster(t)}

	reportField := func(path string, a lab.Assert) lab.Check {
		return lab.Check{File: &lab.FileCheck{Path: "/root/out/sync-report.json", Field: &lab.FieldAssert{Path: path, Assert: a}}}
	}
	replicas := func(a lab.Assert) lab.Check {
		return lab.Check{Kube: &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Name: "web",
			Field: &lab.FieldAssert{Path: "spec.replicas", Assert: a}}}
	}
	tests := []struct {
		name   string
		check  lab.Check
		status Status
		msg    string
	}{
		{"report commit is HEAD", reportField("repo_commit", lab.Assert{Equals: refv("git:/root/repo@HEAD")}), Pass, ""},
		{"a short hash is not HEAD", reportField("short", lab.Assert{Equals: refv("git:/root/repo@HEAD")}),
			Fail, `expected short = "` + head + `" (from git:/root/repo@HEAD) in /root/out/sync-report.json, found "` + short + `"`},
		{"file content is HEAD", lab.Check{File: &lab.FileCheck{Path: "/root/out/commit.txt", Equals: refv("git:/root/repo@HEAD")}}, Pass, ""},
		{"file content is not the previous commit", lab.Check{File: &lab.FileCheck{Path: "/root/out/commit.txt", NotMatches: []string{"^" + strings.TrimSpace(gitBin(t, filepath.Join(root, "root/repo"), "rev-parse", "HEAD~1"))}}}, Pass, ""},
		{"cluster replicas equal the repository's", replicas(lab.Assert{Equals: refv("git:/root/repo@HEAD:apps/web/deployment.yaml#spec.replicas")}), Pass, ""},
		{"cluster replicas differ from a file's", replicas(lab.Assert{Equals: refv("file:/root/out/local.yaml#spec.replicas")}),
			Fail, "expected spec.replicas = 2 (from file:/root/out/local.yaml#spec.replicas) in apps/v1 Deployment gitops-lab/web, found 3"},
		{"report replicas equal the cluster's", reportField("replicas", lab.Assert{Equals: refv("kube:apps/v1/Deployment/gitops-lab/web#spec.replicas")}), Pass, ""},
		{"gte a reference", replicas(lab.Assert{GTE: refv("file:/root/out/local.yaml#spec.min")}), Pass, ""},
		{"lte a reference fails", replicas(lab.Assert{LTE: refv("file:/root/out/local.yaml#spec.replicas")}),
			Fail, "expected spec.replicas <= 2 (from file:/root/out/local.yaml#spec.replicas) in apps/v1 Deployment gitops-lab/web, found 3"},
		{"gte a non-number reference", replicas(lab.Assert{GTE: refv("file:/root/out/local.yaml#spec.labels")}),
			Fail, `expected a number for gte, found {"app":"web"} (from file:/root/out/local.yaml#spec.labels)`},
		{"subsetOf a reference", lab.Check{Kube: &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Name: "web",
			Field: &lab.FieldAssert{Path: "metadata.labels", Assert: lab.Assert{SubsetOf: refv("file:/root/out/local.yaml#spec.labels")}}}},
			Fail, `expected every entry of metadata.labels to appear in {"app":"web"} (from file:/root/out/local.yaml#spec.labels) in apps/v1 Deployment gitops-lab/web, found tier: "front"`},
		{"reference to a missing file fails", reportField("repo_commit", lab.Assert{Equals: refv("file:/root/out/missing.json#repo_commit")}),
			Fail, "reference file:/root/out/missing.json#repo_commit: /root/out/missing.json does not exist"},
		{"reference to a malformed file fails", reportField("repo_commit", lab.Assert{Equals: refv("file:/root/out/broken.json#repo_commit")}),
			Fail, "reference file:/root/out/broken.json#repo_commit: /root/out/broken.json is not valid JSON: unexpected EOF"},
		{"reference to a missing field fails", reportField("repo_commit", lab.Assert{Equals: refv("file:/root/out/local.yaml#spec.commit")}),
			Fail, "reference file:/root/out/local.yaml#spec.commit: spec.commit not found in /root/out/local.yaml"},
		{"reference to a missing repository fails", reportField("repo_commit", lab.Assert{Equals: refv("git:/root/nothing@HEAD")}),
			Fail, "reference git:/root/nothing@HEAD: no git repository at /root/nothing"},
		{"reference to an empty repository fails", reportField("repo_commit", lab.Assert{Equals: refv("git:/root/empty@HEAD")}),
			Fail, "reference git:/root/empty@HEAD: the repository at /root/empty has no commits"},
		{"reference to an uncommitted file fails", replicas(lab.Assert{Equals: refv("git:/root/repo@HEAD:apps/db.yaml#spec.replicas")}),
			Fail, "reference git:/root/repo@HEAD:apps/db.yaml#spec.replicas: apps/db.yaml not found at HEAD"},
		{"reference to an earlier revision", replicas(lab.Assert{NotEquals: refv("git:/root/repo@HEAD~1:apps/web/deployment.yaml#spec.replicas")}), Pass, ""},
		{"reference to a missing object fails", reportField("replicas", lab.Assert{Equals: refv("kube:apps/v1/Deployment/gitops-lab/api#spec.replicas")}),
			Fail, "reference kube:apps/v1/Deployment/gitops-lab/api#spec.replicas: apps/v1 Deployment gitops-lab/api not found in the cluster"},
		{"reference that does not parse is an error", reportField("replicas", lab.Assert{Equals: refv("svn:/root/repo")}),
			Error, `reference "svn:/root/repo": unknown source "svn"; use git:, file: or kube:`},
		{"kube reference without credentials is an error", lab.Check{File: &lab.FileCheck{Path: "/root/out/sync-report.json",
			Field: &lab.FieldAssert{Path: "replicas", Assert: lab.Assert{Equals: refv("kube:apps/v1/Deployment/gitops-lab/web#spec.replicas")}}}},
			Error, "reference kube:apps/v1/Deployment/gitops-lab/web#spec.replicas: no cluster credentials were given to the checker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := env
			if strings.Contains(tt.name, "without credentials") {
				e.Kube = nil
			}
			expect(t, runCheck(t, e, tt.check), tt.status, tt.msg)
		})
	}
}
