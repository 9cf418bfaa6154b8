package labctl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// A note that is not Korean is told the one mistake its text shows:
// Japanese, English, or English with a Korean word; a note in another
// language, or a Korean one, is told none.
func TestGitOpsLabNoteMistakesByEvidence(t *testing.T) {
	s, i := gitopsCheck(t, "drift", "note-korean")
	tests := []struct{ note, want string }{
		{"手で変えた値はリポジトリにない。\n次の適用で元に戻って消える。\n", "note-in-japanese"},
		{"kubectl scale で5にした。드리프트です。\n次の apply で3に戻る。\n", "note-in-japanese"},
		{"The manual scale to 5 is not in the repository.\nThe next kubectl apply puts web back to 3.\n", "note-in-english"},
		{"manual scale 5 = drift\n`kubectl apply` restores 3\n", "note-in-english"},
		{"The manual scale to 5 is drift, not in the repo.\n다음 apply reverts it to 3.\n", "english-with-korean-words"},
		{"손으로 바꾼 값은 저장소에 없다.\n다음 적용에서 되돌아가고 사라진다.\n", ""},
		{"手动扩容到5不在仓库里。\n下次应用会恢复为3。\n", ""},
		{"手动 kubectl scale 到5不在仓库里。\n下次 apply 会恢复为3。\n", ""},
		{"Ручное kubectl scale до 5 не в репозитории.\nСледующий apply вернёт 3.\n", ""},
		{"```\n손으로 바꾼 replicas 5는 저장소에 없다.\n다음 apply 에서 사라진다.\n```\n", ""},
		{"    손으로 바꾼 replicas 5는 저장소에 없다.\n    다음 apply 에서 사라진다.\n", ""},
	}
	for _, tt := range tests {
		root := t.TempDir()
		dir := filepath.Join(root, "root/gitops/out")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "drift-note.txt"), []byte(tt.note), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, got := judgeOne(s, i, root); got != tt.want {
			t.Errorf("note %q: told %q, want %q", tt.note, got, tt.want)
		}
	}
}

// An image of the repository's Deployment is judged pinned or not, and a
// tag that moves is told the one mistake it is, whatever its variant and
// whatever other containers stand beside it.
func TestGitOpsLabImageTagsByEvidence(t *testing.T) {
	s, i := gitopsCheck(t, "manifests", "image-pinned")
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		images []string
		want   string // the mistake told; "pinned" when image-pinned passes
	}{
		{[]string{"nginx:1.27"}, "pinned"},
		{[]string{"nginx:1.27.3"}, "pinned"},
		{[]string{"nginx:1.27-alpine"}, "pinned"},
		{[]string{"nginx:1.27.3-alpine3.21-perl"}, "pinned"},
		{[]string{"docker.io/library/nginx:1.27"}, "pinned"},
		{[]string{"localhost:5000/nginx:1.27"}, "pinned"},
		{[]string{"nginx" + digest}, "pinned"},
		{[]string{"nginx:latest" + digest}, "pinned"},
		{[]string{"nginx:1.27", "busybox:1.36.1"}, "pinned"},
		{[]string{"nginx:latest"}, "latest-tag"},
		{[]string{"nginx:Latest"}, "latest-tag"},
		{[]string{"docker.io/library/nginx:latest"}, "latest-tag"},
		{[]string{"nginx"}, "untagged-image"},
		{[]string{"localhost:5000/nginx"}, "untagged-image"},
		{[]string{"nginx:stable"}, "stable-tag"},
		{[]string{"nginx:mainline"}, "mainline-tag"},
		{[]string{"nginx:mainline-alpine3.21"}, "mainline-tag"},
		{[]string{"nginx:alpine"}, "alpine-tag"},
		{[]string{"nginx:alpine-slim"}, "alpine-tag"},
		{[]string{"nginx:alpine-perl"}, "alpine-tag"},
		{[]string{"nginx:stable-alpine3.20"}, "stable-variant-tag"},
		{[]string{"nginx:stable-alpine"}, "stable-variant-tag"},
		{[]string{"nginx:stable-perl"}, "stable-variant-tag"},
		{[]string{"nginx:alpine3.21"}, "base-only-tag"},
		{[]string{"nginx:alpine3.21-perl"}, "base-only-tag"},
		{[]string{"nginx:1"}, "major-only-tag"},
		{[]string{"nginx:1-alpine"}, "major-only-tag"},
		{[]string{"nginx:latest", "busybox:1.36.1"}, "latest-tag"},
		{[]string{"busybox:1.36.1", "nginx:stable-alpine"}, "stable-variant-tag"},
	}
	for _, tt := range tests {
		root := t.TempDir()
		dir := filepath.Join(root, "root/gitops/repo/apps/web")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n"
		for k, image := range tt.images {
			manifest += fmt.Sprintf("        - name: c%d\n          image: %s\n", k, image)
		}
		if err := os.WriteFile(filepath.Join(dir, "deployment.yaml"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		passed, got := judgeOne(s, i, root)
		if passed {
			got = "pinned"
		}
		if got != tt.want {
			t.Errorf("images %v: told %q, want %q", tt.images, got, tt.want)
		}
	}
}

// gitopsCheck finds check name of step id in the GitOps lab.
func gitopsCheck(t *testing.T, id, name string) (*lab.Step, int) {
	t.Helper()
	l, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	j := slices.IndexFunc(l.Steps, func(s lab.Step) bool { return s.ID == id })
	if j < 0 {
		t.Fatalf("the lab has no step %s", id)
	}
	s := &l.Steps[j]
	i := slices.IndexFunc(s.Checks, func(c lab.Check) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("step %s has no check %s", id, name)
	}
	return s, i
}

// judgeOne runs check i of step s on the sandbox files under root and
// returns whether it passed and, when it did not, the names of the mistakes
// the learner is told, as the shell tells them.
func judgeOne(s *lab.Step, i int, root string) (passed bool, told string) {
	run := func(cs []lab.Check) []checks.Result {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return checks.Run(ctx, checks.Env{Root: root, Now: time.Now}, cs)
	}
	var failing []string
	for _, r := range run(s.Checks[i : i+1]) {
		if r.Status != checks.Pass {
			failing = append(failing, r.Name)
		}
	}
	if len(failing) == 0 {
		return true, ""
	}
	held := func(m *lab.Mistake) bool {
		for _, r := range run(m.Evidence) {
			if r.Status != checks.Pass {
				return false
			}
		}
		return true
	}
	var names []string
	for _, m := range s.LikelyMistakes(failing, false, held) {
		names = append(names, m.Name)
	}
	return false, strings.Join(names, ",")
}
