// Package progress owns the learner's progress through a lab: the current
// step, the steps passed and when, attempts per step and the grade history.
// It is kept on the host, one JSON file per lab under the user's state
// directory, written atomically so that a crash never leaves a half-written
// file, and read back tolerant of a missing file but never of a corrupt one.
//
// The step logic (what comes next, is the lab done) is pure and lives
// beside the store: see (*Progress).Record. Whether a round of checks
// passed a step is decided by the caller, with checks.StepPassed.
package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/internal/atomicfile"
)

// FileName is the name of the progress file inside a lab's state directory.
const FileName = "progress.json"

// SchemaVersion is the version of the progress file this labctl writes.
const SchemaVersion = 1

// Progress is one learner's progress through one lab.
type Progress struct {
	SchemaVersion int `json:"schemaVersion"`
	// Lab is the lab's metadata.name.
	Lab string `json:"lab"`
	// Digest is the digest of the lab definition the progress was last
	// recorded against. Progress is kept by step id when it changes.
	Digest string `json:"digest,omitempty"`
	// Current is the id of the step the learner is on. Empty means the first
	// step not yet passed, in lab order; with every step passed, the lab is done.
	Current string `json:"current,omitempty"`
	// Passed maps a step id to when its checks first passed.
	Passed map[string]time.Time `json:"passed,omitempty"`
	// Started maps a step id to when it became the learner's current
	// step; audit checks judge what the learner did since then.
	Started map[string]time.Time `json:"started,omitempty"`
	// Heads maps a step id to where the repositories its git checks count
	// commits from (since: step) were when it became the current step:
	// repository path to the grader's ReportHead answer (HEAD's commit or
	// checks.HeadNone, then every branch's commit). The learner cannot set
	// it: it is the host's.
	Heads map[string]map[string]string `json:"heads,omitempty"`
	// LateHeads maps a step id to the repositories of Heads it noted late:
	// not as the step became current but at a later look (the step's
	// first check), when the learner's commits for the step may already
	// be there. A check cannot count too few commits since such a head
	// against the learner (checks.HeadLate).
	LateHeads map[string]map[string]bool `json:"lateHeads,omitempty"`
	// Begun is when the learner's present attempt began (the last reset);
	// zero when the lab was never reset.
	Begun time.Time `json:"begun,omitzero"`
	// Attempts maps a step id to the number of times its checks were run.
	Attempts map[string]int `json:"attempts,omitempty"`
	// SolutionShown maps a step id to when the learner first asked for its
	// solution. A reset keeps it: the learner saw the answer.
	SolutionShown map[string]time.Time `json:"solutionShown,omitempty"`
	// Kept maps a step id to the results of its checks in the round in
	// which it first passed: the grade reports them instead of judging the
	// step again against the final state (but for the lab's final checks).
	Kept map[string]KeptVerdict `json:"kept,omitempty"`
	// Grades is the grade history, oldest first.
	Grades []Grade `json:"grades,omitempty"`
	// UpdatedAt is when the progress was last saved.
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// KeptVerdict is a step's passing round, as the host's labctl saw it.
type KeptVerdict struct {
	At      time.Time    `json:"at"`
	Results []KeptResult `json:"results"`
}

// KeptResult is one check's result in a kept round.
type KeptResult struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
	Message     string `json:"message,omitempty"`
	Points      int    `json:"points"`
	Optional    bool   `json:"optional,omitempty"`
}

// Grade is one `labctl grade` run.
type Grade struct {
	Time     time.Time `json:"time"`
	Score    int       `json:"score"`
	MaxScore int       `json:"maxScore"`
	Passed   bool      `json:"passed"`
	Digest   string    `json:"digest,omitempty"`
}

// New returns the progress of a learner who has not started the lab.
func New(labName string) *Progress {
	return &Progress{SchemaVersion: SchemaVersion, Lab: labName}
}

// Store reads and writes the progress file of one lab.
type Store struct {
	dir string
}

// NewStore returns the store kept in dir (a lab's state directory, see Dir).
// The directory is created on the first Save.
func NewStore(dir string) *Store { return &Store{dir: dir} }

// Dir is the directory the store keeps its file in.
func (s *Store) Dir() string { return s.dir }

// Path is the progress file's path.
func (s *Store) Path() string { return filepath.Join(s.dir, FileName) }

// CorruptError reports a progress file that exists but cannot be read back.
// It is never overwritten silently: the learner decides.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the progress file %s is corrupt (%v): run `labctl reset` to start the lab over, or delete the file", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Load reads the progress of labName. A missing file is a learner who has
// not started (New(labName)); an unreadable or malformed one is a
// *CorruptError naming the file and the fix.
func (s *Store) Load(labName string) (*Progress, error) {
	b, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return New(labName), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading progress: %w", err)
	}
	p, err := decode(b)
	if err != nil {
		return nil, &CorruptError{Path: s.Path(), Err: err}
	}
	if p.Lab != labName {
		return nil, &CorruptError{Path: s.Path(), Err: fmt.Errorf("it belongs to lab %q, not %q", p.Lab, labName)}
	}
	return p, nil
}

func decode(b []byte) (*Progress, error) {
	var p Progress
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	switch {
	case p.SchemaVersion == 0:
		return nil, errors.New("no schemaVersion")
	case p.SchemaVersion > SchemaVersion:
		return nil, fmt.Errorf("schemaVersion %d is newer than this labctl reads (%d); upgrade labctl", p.SchemaVersion, SchemaVersion)
	case p.Lab == "":
		return nil, errors.New("no lab name")
	}
	for id, n := range p.Attempts {
		if n < 0 {
			return nil, fmt.Errorf("negative attempts for step %q", id)
		}
	}
	return &p, nil
}

// Save writes p atomically (see package atomicfile): a crash at any point
// leaves either the old or the new file.
func (s *Store) Save(p *Progress) error {
	if p.SchemaVersion == 0 {
		p.SchemaVersion = SchemaVersion
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding progress: %w", err)
	}
	b = append(b, '\n')
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("saving progress: %w", err)
	}
	if err := atomicfile.WriteFile(s.Path(), b, 0o600); err != nil {
		return fmt.Errorf("saving progress: %w", err)
	}
	return nil
}

// Remove deletes the progress file; a missing file is not an error.
func (s *Store) Remove() error {
	if err := os.Remove(s.Path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing progress: %w", err)
	}
	return nil
}
