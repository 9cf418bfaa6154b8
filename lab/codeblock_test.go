package lab

import (
	"strings"
	"testing"
)

// withInstructions is translatedLab (a Japanese lab) whose first step's
// instructions are instr, a YAML double-quoted string's content (escapes
// such as \x1b and \u202E are the characters), and with translations.
func withInstructions(t *testing.T, instr, translations string) error {
	t.Helper()
	src := strings.Replace(translatedLab, "instructions: /root/repo を作る", `instructions: "`+instr+`"`, 1)
	if src == translatedLab {
		t.Fatal("the lab's instructions were not replaced")
	}
	_, err := Parse("lab.yaml", []byte(strings.Replace(src, "%s", translations, 1)))
	return err
}

// TestCodeBlockRefusesWhatIsNotShown: a code block holding a character
// the page does not show but a terminal gets (each class of them) fails
// validation, with a message that names the step, the block and the
// character.
func TestCodeBlockRefusesWhatIsNotShown(t *testing.T) {
	for _, c := range []struct{ name, block, want string }{
		{"escape sequence", "```sh\\necho safe\\x1b[2K\\n```", "U+001B ESCAPE at line 1, column 10"},
		{"carriage return", "```sh\\necho safe\\rrm -rf /root\\n```", "U+000D CARRIAGE RETURN at line 1, column 10"},
		{"backspace", "```sh\\nls\\b\\bcat /etc/shadow\\n```", "U+0008 BACKSPACE"},
		{"Ctrl-C", "```sh\\necho a\\x03\\n```", "U+0003 END OF TEXT (Ctrl-C)"},
		{"Ctrl-U", "```\\necho a\\x15rm x\\n```", "U+0015 NEGATIVE ACKNOWLEDGE (Ctrl-U)"},
		{"delete", "```bash\\necho a\\x7f\\n```", "U+007F DELETE"},
		{"C1 next line", "```sh\\necho a\\x85b\\n```", "U+0085 NEXT LINE"},
		{"C1 CSI", "```sh\\necho a\\x9b2K\\n```", "U+009B CONTROL SEQUENCE INTRODUCER"},
		{"right-to-left override", "```sh\\necho \\u202Etxt.exe\\n```", "U+202E RIGHT-TO-LEFT OVERRIDE at line 1, column 6"},
		{"left-to-right isolate", "```sh\\nrm -rf \\u2066/tmp/x\\u2069 /\\n```", "U+2066 LEFT-TO-RIGHT ISOLATE"},
		{"pop directional isolate", "```sh\\nls \\u2069\\n```", "U+2069 POP DIRECTIONAL ISOLATE"},
		{"zero width space", "```sh\\nkubectl get po\\u200Bds\\n```", "U+200B ZERO WIDTH SPACE"},
		{"zero width joiner", "```sh\\nls\\u200D\\n```", "U+200D ZERO WIDTH JOINER"},
		{"byte order mark", "```sh\\n\\uFEFFls\\n```", "U+FEFF ZERO WIDTH NO-BREAK SPACE"},
		{"soft hyphen", "```sh\\nrm -rf /ro\\u00ADot\\n```", "U+00AD SOFT HYPHEN"},
		{"hangul filler", "```sh\\nls \\u3164\\n```", "U+3164 HANGUL FILLER"},
		{"variation selector", "```sh\\nls a\\uFE0F\\n```", "U+FE0F (a variation selector)"},
		{"line separator", "```sh\\necho a\\u2028rm x\\n```", "U+2028 LINE SEPARATOR"},
		{"in a YAML block too", "```yaml\\nkind: Con\\u202EfigMap\\n```", "U+202E RIGHT-TO-LEFT OVERRIDE"},
		{"in an indented block", "見て:\\n\\n    echo \\u202Eabc\\n", "U+202E RIGHT-TO-LEFT OVERRIDE"},
		{"in a block in a list", "1. 実行:\\n\\n   ```sh\\n   echo a\\x1b[A\\n   ```\\n", "U+001B ESCAPE"},
		{"tab in a shell's block", "```sh\\ncat /etc/pass\\t\\n```", "U+0009 CHARACTER TABULATION (tab)"},
		{"tab in a block of no language", "```\\nls\\tx\\n```", "asks the shell to complete the word"},
		{"in the second block", "```sh\\nls\\n```\\n\\n次:\\n\\n```sh\\nls\\u202E\\n```", "code block 2 (line 10 of the text)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := withInstructions(t, "試す:\\n\\n"+c.block, "")
			if err == nil {
				t.Fatal("the lab passed validation")
			}
			msg := err.Error()
			for _, want := range []string{"steps[0].instructions", `step "first"'s instructions: code block`, c.want} {
				if !strings.Contains(msg, want) {
					t.Errorf("the message does not say %q:\n%s", want, msg)
				}
			}
		})
	}
}

// TestCodeBlockRefusedInEveryText: the goal, why, solution, hints and a
// translation's texts are checked like the instructions.
func TestCodeBlockRefusedInEveryText(t *testing.T) {
	bad := "\"```sh\\nls \\u202E\\n```\""
	for _, c := range []struct{ from, to, translations, want string }{
		{"goal: /srv/goal を使う", "goal: " + bad, "", "metadata.goal: the lab's goal: code block 1"},
		{"  why: 理由", "  why: " + bad, "", "metadata.why: the lab's why: code block 1"},
		{"solution: 答え", "solution: " + bad, "", `steps[0].solution: step "first"'s solution: code block 1`},
		{"hints: [ヒント一, ヒント二]", "hints: [ヒント一, " + bad + "]", "", `steps[0].hints[1]: step "first"'s hint 2: code block 1`},
		{"", "", "translations:\n  en:\n    goal: " + bad + "\n", "translations.en.goal: the en goal: code block 1"},
		{"", "", "translations:\n  en:\n    steps:\n      second:\n        hints: [" + bad + "]\n", `translations.en.steps.second.hints[0]: step "second"'s hint 1: code block 1`},
	} {
		t.Run(c.want, func(t *testing.T) {
			src := strings.Replace(translatedLab, c.from, c.to, 1)
			_, err := Parse("lab.yaml", []byte(strings.Replace(src, "%s", c.translations, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "U+202E RIGHT-TO-LEFT OVERRIDE") {
				t.Fatalf("got %v, want a message with %q and the character", err, c.want)
			}
		})
	}
}

// TestCodeBlockPassesWhatIsShown: ordinary UTF-8 (Japanese, Korean,
// emoji, a no-break space), a tab in a block that is only copied, and the
// invisible characters that scripts need in prose outside code blocks
// pass.
func TestCodeBlockPassesWhatIsShown(t *testing.T) {
	for _, instr := range []string{
		"```sh\\necho 'こんにちは、世界' > /root/挨拶.txt\\nkubectl get pods -n 기본\\n```",
		"```bash\\necho '안녕하세요 세계' # 한국어\\nls /root   # ✓ 🚀\\n```",
		"```console\\n$ echo \\u00A0a\\n```",
		"```make\\nall:\\n\\tgo build ./...\\n```",
		"```yaml\\nkey:\\tvalue\\n```",
		"Persian prose with a joiner: می\\u200Cخواهم, a mark \\u200F and an isolate \\u2067abc\\u2069, then `ls`.\\n\\n```sh\\nls\\n```",
		"Inline `code` only, and &#x202E; as an entity in prose.",
		"```sh\\necho '&#x202E; stays as it is written'\\n```",
	} {
		if err := withInstructions(t, instr, ""); err != nil {
			t.Errorf("instructions %q: %v", instr, err)
		}
	}
}

// TestCodeBlocks: the blocks are those the page renders as <pre>, with
// their language and the line of the text where their code starts.
func TestCodeBlocks(t *testing.T) {
	md := "\n\nIntro `inline`.\n\n```sh title\nls\n```\n\n    indented\n\n> ```yaml\n> a: 1\n> ```\n\n<pre>raw html is not a block</pre>\n\n```b&#97;sh\nx\n```\n"
	got := CodeBlocks(md)
	want := []CodeBlock{
		{N: 1, Line: 6, Lang: "sh", Text: "ls\n"},
		{N: 2, Line: 9, Text: "indented\n"},
		{N: 3, Line: 12, Lang: "yaml", Text: "a: 1\n"},
		{N: 4, Line: 18, Lang: "bash", Text: "x\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d blocks %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d: got %+v, want %+v", i+1, got[i], want[i])
		}
	}
	for lang, runnable := range map[string]bool{"": true, "sh": true, "bash": true, "console": true, "zsh": true, "shell": true, "sh-session": true, "yaml": false, "shx": false, "text": false} {
		if got := (CodeBlock{Lang: lang}).Runnable(); got != runnable {
			t.Errorf("a block in %q runnable: %v, want %v", lang, got, runnable)
		}
	}
}

// TestFirstUnshownNotUTF8: a byte that is not UTF-8 is named as a byte.
func TestFirstUnshownNotUTF8(t *testing.T) {
	u, ok := FirstUnshown("ls\n\xffx", true)
	if !ok || u.Line != 2 || u.Column != 1 || !strings.Contains(u.Name(), "0xFF") {
		t.Fatalf("got %+v %v (%s)", u, ok, u.Name())
	}
}
