package lab

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in   string
		want Ref
	}{
		{"git:/root/gitops/repo@HEAD", Ref{Source: RefGit, Repo: "/root/gitops/repo", Rev: "HEAD"}},
		{"git:/root/gitops/repo@HEAD:apps/web/deployment.yaml#spec.replicas", Ref{Source: RefGit, Repo: "/root/gitops/repo", Rev: "HEAD",
			File: "apps/web/deployment.yaml", Field: Path{Key("spec"), Key("replicas")}}},
		{"git:/r@main~1:a.yaml", Ref{Source: RefGit, Repo: "/r", Rev: "main~1", File: "a.yaml"}},
		{"file:/root/gitops/out/sync-report.json#repo_commit", Ref{Source: RefFile, Path: "/root/gitops/out/sync-report.json", Field: Path{Key("repo_commit")}}},
		{"file:/root/notes.txt", Ref{Source: RefFile, Path: "/root/notes.txt"}},
		{"kube:apps/v1/Deployment/gitops-lab/web#spec.replicas", Ref{Source: RefKube, APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Name: "web",
			Field: Path{Key("spec"), Key("replicas")}}},
		{"kube:v1/Namespace//gitops-lab#metadata.name", Ref{Source: RefKube, APIVersion: "v1", Kind: "Namespace", Name: "gitops-lab", Field: Path{Key("metadata"), Key("name")}}},
		{`kube:v1/ConfigMap/default/cm#data["a.b"]`, Ref{Source: RefKube, APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "cm", Field: Path{Key("data"), Key("a.b")}}},
	}
	for _, tt := range tests {
		got, err := ParseRef(tt.in)
		if err != nil {
			t.Errorf("ParseRef(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseRef(%q) =\n  %#v\nwant\n  %#v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.in {
			t.Errorf("ParseRef(%q).String() = %q", tt.in, s)
		}
	}
}

func TestParseRefErrors(t *testing.T) {
	tests := map[string]string{
		"":                                 "expected git:, file: or kube:",
		"/root/x":                          "expected git:, file: or kube:",
		"http://example.com":               `unknown source "http"`,
		"git:/repo":                        "expected git:/path/to/repo@REV",
		"git:repo@HEAD":                    `repository path "repo" must be absolute`,
		"git:/repo@":                       "missing revision after @",
		"git:/repo@HEAD#a":                 "a field (#...) needs a file",
		"git:/repo@HEAD:/abs.yaml#a":       `file "/abs.yaml" must be relative to the repository root`,
		"git:/repo@HEAD:../x.yaml":         `file "../x.yaml" must name a file inside the repository`,
		"file:relative.json#a":             `file path "relative.json" must be absolute`,
		"file:/x.json#":                    "empty field path",
		"file:/x.json#a..b":                "expected a key after the dot",
		"kube:Deployment/web":              "expected kube:APIVERSION/Kind/NAMESPACE/NAME",
		"kube:apps/v1/Deployment/ns/web/x": "expected kube:APIVERSION/Kind/NAMESPACE/NAME",
		"kube:v1//default/x":               "missing kind",
		"kube:v1/Pod/default/":             "missing object name",
		"kube:/Pod/default/p":              "missing API version",
		"kube:apps//Deployment/ns/web":     "missing API version",
		"kube:/v1/Deployment/ns/web":       "empty API group",
		"kube:apps/v1/Deployment/web":      `"apps" is not an API version such as v1 or v1beta1`,
		"kube:apps/v1/deployment/ns/web":   `kind "deployment" does not start with an upper-case letter`,
		"kube:v1/Pod/Bad_NS/p":             `namespace "Bad_NS" is not a DNS label`,
	}
	for in, want := range tests {
		_, err := ParseRef(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRef(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}
