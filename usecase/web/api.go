package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/shell"
)

// labDoc is GET /api/lab: the lab's texts, Markdown rendered as sanitised
// HTML.
type labDoc struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	Goal  string `json:"goal"`
	Why   string `json:"why"`
	Lang  string `json:"lang"`
	// Text is the language the texts are in (a tag of Languages).
	Text string `json:"text"`
	// Languages are those the lab can be read in, to choose from.
	Languages []languageDoc `json:"languages"`
	Steps     []stepDoc     `json:"steps"`
}

// languageDoc is a language the lab can be read in: its tag, and its name
// in itself.
type languageDoc struct {
	Tag  string `json:"tag"`
	Name string `json:"name"`
}

// autonyms name languages in themselves, for the page's chooser; another
// language shows its tag.
var autonyms = map[string]string{
	"de": "Deutsch", "en": "English", "es": "Español", "fr": "Français", "id": "Bahasa Indonesia",
	"it": "Italiano", "ja": "日本語", "ko": "한국어", "pt": "Português", "ru": "Русский",
	"th": "ไทย", "uk": "Українська", "vi": "Tiếng Việt", "zh": "中文",
}

func autonym(tag string) string {
	primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
	if n, ok := autonyms[primary]; ok {
		if primary != strings.ToLower(tag) {
			return n + " (" + tag + ")"
		}
		return n
	}
	return tag
}

type stepDoc struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Instructions string   `json:"instructions"`
	Why          string   `json:"why"`
	Hints        []string `json:"hints"`
	// HasSolution says the step has a solution, which POST /api/solution
	// gives (and records as asked for); the text is not sent before.
	HasSolution bool `json:"hasSolution"`
}

// stateDoc is GET /api/state: where the learner stands, and which version
// of the lab the page should show (LabVersion counts the reloads of
// labctl ui --watch; LabProblem is what is wrong with the last edit, or the
// edited lab's warnings).
type stateDoc struct {
	Current    string   `json:"current"`
	Passed     []string `json:"passed"`
	Done       bool     `json:"done"`
	LabVersion int      `json:"labVersion"`
	LabProblem string   `json:"labProblem,omitempty"`
}

// checkDoc is POST /api/check's answer. NotPassed counts the required
// checks that did not pass, those that could not run included, of Required
// (as labctl check counts them).
type checkDoc struct {
	Step      string        `json:"step"`
	Passed    bool          `json:"passed"`
	NotPassed int           `json:"notPassed"`
	Required  int           `json:"required"`
	Checks    []checkResult `json:"checks"`
}

// checkResult is one result; its status and mark are report.StatusLook's.
type checkResult struct {
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Status      string      `json:"status"`
	Mark        string      `json:"mark"`
	Message     string      `json:"message"`
	Optional    bool        `json:"optional"`
	Mistake     *mistakeDoc `json:"mistake"`
}

type mistakeDoc struct {
	Name    string `json:"name"`
	Explain string `json:"explain"`
}

// gradeResult is the last grade, for /api/report.
type gradeResult struct {
	report *report.Report
}

// labLanguage is "ja" for a lab written in Japanese, else "en".
func labLanguage(l *lab.Lab) string {
	if tag := strings.ToLower(l.Metadata.Language); tag == "ja" || strings.HasPrefix(tag, "ja-") {
		return "ja"
	}
	return "en"
}

func (s *Server) apiLab(w http.ResponseWriter, r *http.Request) {
	v := s.text(r)
	l := v.lab
	doc := labDoc{Name: l.Metadata.Name, Title: l.Metadata.Title, Goal: s.md.Render(l.Metadata.Goal), Why: s.md.Render(l.Metadata.Why), Lang: labLanguage(l),
		Text: v.tag, Steps: []stepDoc{}}
	s.labMu.RLock()
	for _, o := range s.langs {
		doc.Languages = append(doc.Languages, languageDoc{Tag: o.tag, Name: autonym(o.tag)})
	}
	s.labMu.RUnlock()
	for _, st := range l.Steps {
		sd := stepDoc{ID: st.ID, Title: st.Title, Instructions: s.md.Render(st.Instructions), Why: s.md.Render(st.Why), Hints: []string{},
			HasSolution: strings.TrimSpace(st.Solution) != ""}
		for _, h := range st.Hints {
			sd.Hints = append(sd.Hints, s.md.Render(h))
		}
		doc.Steps = append(doc.Steps, sd)
	}
	writeJSON(w, http.StatusOK, doc)
}

// progress is the learner's progress as the shell reads it.
func (s *Server) progress() *shell.StoreProgress {
	l, digest := s.labNow()
	return &shell.StoreProgress{Store: s.cfg.Store, Lab: l, Digest: digest, Scripts: s.cfg.Sandbox, Situation: s.cfg.Situation, Checker: s.cfg.Sandbox}
}

func (s *Server) apiState(w http.ResponseWriter, _ *http.Request) {
	s.labMu.RLock()
	l, version, problem := s.langs[0].lab, s.labVersion, s.labProblem
	s.labMu.RUnlock()
	st, err := s.progress().State()
	if err != nil {
		s.apiError(w, http.StatusInternalServerError, err)
		return
	}
	doc := stateDoc{Passed: []string{}, Done: st.Current == nil, LabVersion: version, LabProblem: problem}
	if st.Current != nil {
		doc.Current = st.Current.ID
	}
	for _, step := range l.Steps {
		if st.Passed[step.ID] {
			doc.Passed = append(doc.Passed, step.ID)
		}
	}
	writeJSON(w, http.StatusOK, doc)
}

// grader is `labctl check` and `labctl grade` for one request: its printed
// words go nowhere, the page shows the results.
func (s *Server) grader(v variant, seen func(*lab.Step, []checks.Result, report.Evidence)) *grading.Grader {
	_, digest := s.labNow()
	return &grading.Grader{
		Lab:       v.lab,
		Digest:    digest,
		Store:     s.cfg.Store,
		Checker:   s.cfg.Sandbox,
		Scripts:   s.cfg.Sandbox,
		Situation: s.cfg.Situation,
		Prober:    s.cfg.Sandbox,
		Catalog:   v.cat,
		Out:       io.Discard,
		Err:       io.Discard,
		OnResults: seen,
	}
}

// maxBody bounds a request's body.
const maxBody = 64 << 10

// apiSolution is POST /api/solution {"step":"ID"}: it records, on the host,
// that the learner asked for the step's solution, then answers with the
// solution rendered: {"step":"ID","html":"..."}.
func (s *Server) apiSolution(w http.ResponseWriter, r *http.Request) {
	id, ok := s.stepRequest(w, r)
	if !ok {
		return
	}
	if id == "" {
		s.apiError(w, http.StatusBadRequest, errors.New(`the body must be {"step":"ID"}`))
		return
	}
	step, err := progress.Step(s.text(r).lab, id)
	if err != nil {
		s.apiError(w, http.StatusNotFound, err)
		return
	}
	if strings.TrimSpace(step.Solution) == "" {
		s.apiError(w, http.StatusNotFound, fmt.Errorf("step %s has no solution", step.ID))
		return
	}
	if err := s.cfg.Store.Update(r.Context(), s.cfg.Lab.Metadata.Name, func(p *progress.Progress) error {
		p.ShowSolution(step.ID, time.Now())
		return nil
	}); err != nil {
		s.apiError(w, http.StatusInternalServerError, fmt.Errorf("recording that the solution was shown: %w", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"step": step.ID, "html": s.md.Render(step.Solution)})
}

// stepRequest reads a body {"step":"ID"}, or an empty one (""); a body that
// is neither is answered 400, and ok is false.
func (s *Server) stepRequest(w http.ResponseWriter, r *http.Request) (id string, ok bool) {
	var req struct {
		Step string `json:"step"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		s.apiError(w, http.StatusBadRequest, err)
		return "", false
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			s.apiError(w, http.StatusBadRequest, errors.New(`the body must be {"step":"ID"}`))
			return "", false
		}
	}
	return req.Step, true
}

func (s *Server) apiCheck(w http.ResponseWriter, r *http.Request) {
	id, ok := s.stepRequest(w, r)
	if !ok {
		return
	}
	if id != "" {
		if _, err := progress.Step(s.text(r).lab, id); err != nil {
			s.apiError(w, http.StatusNotFound, err)
			return
		}
	}
	doc := checkDoc{Step: id, Checks: []checkResult{}}
	v, err := s.grader(s.text(r), func(step *lab.Step, rs []checks.Result, ev report.Evidence) {
		doc.Step = step.ID
		doc.Checks = checkResults(step, rs, ev)
		sum := checks.Summarize(rs)
		doc.NotPassed, doc.Required = sum.Failed+sum.Errored, sum.Required
	}).Check(r.Context(), id)
	if err != nil {
		s.apiError(w, http.StatusBadGateway, err)
		return
	}
	doc.Passed = v == grading.Passed
	writeJSON(w, http.StatusOK, doc)
}

// checkResults are rs as the page shows them: each failing check with the
// known mistake of the step that its failures look like, if any.
func checkResults(step *lab.Step, rs []checks.Result, ev report.Evidence) []checkResult {
	mistakes := report.LikelyMistakes(step, rs, ev)
	out := make([]checkResult, 0, len(rs))
	for _, r := range rs {
		look := report.StatusLook(r.Status)
		c := checkResult{Name: r.Name, Description: r.Description, Status: look.Word, Mark: look.Mark, Message: r.Message, Optional: r.Optional}
		if r.Status == checks.Fail {
			for _, m := range mistakes {
				if i := slices.IndexFunc(step.Mistakes, func(lm lab.Mistake) bool { return lm.Name == m.Name }); i >= 0 && slices.Contains(step.Mistakes[i].Fails, r.Name) {
					c.Mistake = &mistakeDoc{Name: m.Name, Explain: m.Explain}
					break
				}
			}
		}
		out = append(out, c)
	}
	return out
}

func (s *Server) apiGrade(w http.ResponseWriter, r *http.Request) {
	s.gradeMu.Lock()
	defer s.gradeMu.Unlock()
	rep, _, err := s.grader(s.text(r), nil).Grade(r.Context())
	if err != nil {
		s.apiError(w, http.StatusBadGateway, err)
		return
	}
	s.mu.Lock()
	s.grade = &gradeResult{report: rep}
	s.mu.Unlock()
	var b bytes.Buffer
	if err := report.WriteJSON(&b, rep); err != nil {
		s.apiError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}

func (s *Server) apiReport(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	g := s.grade
	s.mu.Unlock()
	if g == nil {
		s.apiError(w, http.StatusNotFound, errors.New("no grade yet: press Grade first"))
		return
	}
	var b bytes.Buffer
	var err error
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
		err = report.WriteJSON(&b, g.report)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `attachment; filename="labctl-grade.json"`)
	case "junit":
		err = report.WriteJUnit(&b, g.report)
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Content-Disposition", `attachment; filename="labctl-grade.xml"`)
	default:
		s.apiError(w, http.StatusBadRequest, errors.New("format must be json or junit"))
		return
	}
	if err != nil {
		w.Header().Del("Content-Disposition")
		s.apiError(w, http.StatusInternalServerError, err)
		return
	}
	_, _ = w.Write(b.Bytes())
}

// apiError answers {"error": message}.
func (s *Server) apiError(w http.ResponseWriter, code int, err error) {
	if code >= 500 {
		s.logf("labctl ui: %v", err)
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
