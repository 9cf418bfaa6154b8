package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

func mistakeLab() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "m", Language: "ja"},
		Steps: []lab.Step{{
			ID: "commit", Title: "コミットする",
			Checks: []lab.Check{{Name: "message"}, {Name: "clean"}},
			Mistakes: []lab.Mistake{
				{Name: "short-message", Description: "メッセージが短すぎる", Fails: []string{"message"},
					Explain: "`wip` では何を変えたか分かりません。\n変更の中身を書きましょう。"},
				{Name: "stray-file", Description: "追跡されていないファイルが残っている", Fails: []string{"clean"}},
			},
		}},
	}
}

func results(message, clean checks.Status) map[string][]checks.Result {
	return map[string][]checks.Result{"commit": {
		{Name: "message", Status: message, Points: 1, Message: "too short"},
		{Name: "clean", Status: clean, Points: 1},
	}}
}

func TestReportNamesTheLikelyMistake(t *testing.T) {
	r := Build(mistakeLab(), "", time.Now(), results(checks.Fail, checks.Pass))
	got := r.Steps[0].Mistakes
	if len(got) != 1 || got[0].Name != "short-message" || !strings.Contains(got[0].Explain, "変更の中身") {
		t.Fatalf("mistakes %+v, want short-message with its explanation", got)
	}
	var text bytes.Buffer
	if err := WriteText(&text, r, msg.New(msg.Japanese)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"よくある間違いのようです: メッセージが短すぎる", "  `wip` では何を変えたか分かりません。", "  変更の中身を書きましょう。"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Steps []struct {
			Mistakes []Mistake `json:"mistakes"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Steps[0].Mistakes) != 1 || doc.Steps[0].Mistakes[0].Description != "メッセージが短すぎる" {
		t.Errorf("JSON mistakes %+v", doc.Steps[0].Mistakes)
	}
}

func TestNoMistakeWithoutAnExactMatch(t *testing.T) {
	for name, res := range map[string]map[string][]checks.Result{
		"both fail":       results(checks.Fail, checks.Fail),
		"all pass":        results(checks.Pass, checks.Pass),
		"one did not run": results(checks.Fail, checks.Error),
	} {
		r := Build(mistakeLab(), "", time.Now(), res)
		if m := r.Steps[0].Mistakes; m == nil || len(m) != 0 {
			t.Errorf("%s: mistakes %#v, want an empty list", name, m)
		}
		var text bytes.Buffer
		if err := WriteText(&text, r, msg.New(msg.English)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text.String(), "known mistake") {
			t.Errorf("%s: the text names a mistake:\n%s", name, text.String())
		}
	}
}
