package labctl_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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
	l, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	j := slices.IndexFunc(l.Steps, func(s lab.Step) bool { return s.ID == "drift" })
	if j < 0 {
		t.Fatal("the lab has no step drift")
	}
	s := &l.Steps[j]
	i := slices.IndexFunc(s.Checks, func(c lab.Check) bool { return c.Name == "note-korean" })
	if i < 0 {
		t.Fatal("step drift has no check note-korean")
	}
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
		held := func(m *lab.Mistake) bool {
			for _, r := range run(m.Evidence) {
				if r.Status != checks.Pass {
					return false
				}
			}
			return true
		}
		got := ""
		for _, m := range s.LikelyMistakes(failing, false, held) {
			got += m.Name
		}
		if got != tt.want {
			t.Errorf("note %q: told %q, want %q", tt.note, got, tt.want)
		}
	}
}
