package checks

import (
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/labctl/labctl/lab"
)

// TestScriptShareCountsProseOutsideCode holds the rule both ways: notes in
// Korean that name commands pass, notes in other languages fail however
// their code is written.
func TestScriptShareCountsProseOutsideCode(t *testing.T) {
	hangul := &lab.ScriptShare{Name: "Hangul", Min: 0.6}
	for _, c := range []struct {
		name string
		text string
		pass bool
	}{
		{"korean naming kubectl commands in prose",
			"kubectl scale 로 바꾼 replicas 5는 저장소에 없는 변경이다.\n다음 kubectl apply 에서 3으로 되돌아가고 사라진다.\n", true},
		{"korean naming kubectl commands in code spans",
			"`kubectl scale` 로 바꾼 값은 저장소에 없다.\n다음 `kubectl apply -n gitops-lab -f apps/web/` 에서 사라진다.\n", true},
		{"korean with a fenced block",
			"수동 변경은 사라진다.\n```sh\nkubectl apply -n gitops-lab -f apps/web/\nこれはコードです\n```\n다음 적용에서 되돌아간다.\n", true},
		{"korean with an indented block",
			"수동 변경은 사라진다.\n\n    kubectl apply -f apps/web/ # これはコード\n\n다음 적용에서 되돌아간다.\n", true},
		{"english only", "The manual change is lost.\nThe next apply reverts it.\n", false},
		{"japanese naming kubectl", "手で変えた値は `kubectl apply` で消える。\n次の適用で元に戻る。\n", false},
		{"japanese with one korean word", "手で変えた値はリポジトリにない。\n次の適用で元に戻って消える。저장소\n", false},
		{"english with a korean word in each line", "The manual scale to five is not in the repository 손.\nThe next apply puts web back to three 끝.\n", false},
		{"korean only inside code", "```\n저장소에 없는 변경\n```\n`되돌아간다`\n", false},
		{"korean only in an indented block", "    저장소에 없는 변경이다\n    다음 적용에서 사라진다\n", false},
		{"empty", "", false},
	} {
		err := checkScriptShare("/root/n.txt", c.text, hangul)
		if (err == nil) != c.pass {
			t.Errorf("%s: %v, want pass=%v", c.name, err, c.pass)
		}
		if err != nil {
			var f *failure
			if !errors.As(err, &f) {
				t.Errorf("%s: %v is not a failure", c.name, err)
			}
		}
	}
}

// TestScriptLettersSkipsCode checks the counting itself on the shapes that
// Markdown gives code, and that Latin still counts ASCII letters.
func TestScriptLettersSkipsCode(t *testing.T) {
	hangul := unicode.Scripts["Hangul"]
	for _, c := range []struct {
		text       string
		latin      bool
		letters, n int
	}{
		{"가나 abc", false, 3, 2},
		{"가나 abc de", false, 4, 2},
		{"가나 abc", true, 5, 2},
		{"가 `나다` 라", false, 2, 2},
		{"가 ``a ` 나`` 라", false, 2, 2},
		{"가 `나 (never closed)", false, 4, 2}, // an unclosed backquote is text: two words
		{"가\n~~~\n나다\n~~~\n라", false, 2, 2},
		{"가\n````\n```\n나\n````\n라", false, 2, 2},
		{"가\n    나다\n라", false, 4, 4},        // indented after text: a continuation, not code
		{"가\n\n\t나다\n    마\n라", false, 2, 2}, // an indented block of two lines
		{"é ü 가", false, 3, 1},
		{"ab가cd", false, 3, 1},
		{"hello é", true, 6, 0},
	} {
		letters, n := scriptLetters(c.text, hangul, c.latin)
		if letters != c.letters || n != c.n {
			t.Errorf("%q (latin %v): %d letters, %d Hangul; want %d, %d", c.text, c.latin, letters, n, c.letters, c.n)
		}
	}
	if got := strings.Join(proseOutsideCode("a `b` c\n```\nd\n```\ne"), "|"); got != "a  c|e" {
		t.Errorf("prose = %q", got)
	}
}

// A terse Korean note with English terms is about half Hangul (an English
// word counts as one letter, a syllable as one); English with a Korean word
// or two is far below half.
func TestScriptShareOfNotesAsLearnersWriteThem(t *testing.T) {
	for _, tt := range []struct {
		text     string
		min, max float64
	}{
		{"kubectl scale 한 replicas 5 는 drift 임.\n다음 apply 때 rollback 됨.\n", 0.5, 0.6},
		{"The manual scale to 5 is drift, not in the repo.\n다음 apply reverts it to 3.\n", 0, 0.3},
		{"손으로 바꾼 replicas 5는 저장소에 없는 변경이다.\n다음에 저장소를 기준으로 적용하면 3으로 되돌아가고 이 변경은 사라진다.\n", 0.9, 1},
	} {
		letters, in := scriptLetters(tt.text, unicode.Hangul, false)
		share := float64(in) / float64(letters)
		if share < tt.min || share > tt.max {
			t.Errorf("%q: %d of %d letters Hangul (%.2f), want %.2f to %.2f", tt.text, in, letters, share, tt.min, tt.max)
		}
	}
}
