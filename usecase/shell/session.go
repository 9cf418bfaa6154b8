package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Shell is the learner's login shell attached through a PTY: reading gives
// its output, writing types into it.
type Shell interface {
	io.ReadWriter
	// Resize sets the PTY's size.
	Resize(ctx context.Context, rows, cols uint) error
	// Close detaches; the output then ends.
	Close() error
}

// Terminal is the learner's terminal, already in raw mode: reading gives
// keystrokes, writing shows text.
type Terminal interface {
	io.ReadWriter
	// Restore gives the terminal back its original modes; safe to call more
	// than once and from any goroutine.
	Restore()
	// WatchSize calls resized with the terminal's size now and after every
	// change, until ctx ends.
	WatchSize(ctx context.Context, resized func(rows, cols uint))
}

// Size is a terminal's size in character cells.
type Size struct{ Rows, Cols uint }

// Checker runs checks in the sandbox, one round, as
// (*provision.Live).RunChecks does.
type Checker func(ctx context.Context, r checks.Round) ([]checks.Result, error)

// RunChecks makes a Checker a grading.Checker.
func (c Checker) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	return c(ctx, r)
}

// State is where the learner stands, as one reading of the progress says:
// a round of checks takes all it needs from it.
type State struct {
	// Current is the step the learner is on; nil once every step has passed.
	Current *lab.Step
	// Passed holds the ids of the steps that have passed.
	Passed map[string]bool
	// Step gives the checks of Current their windows, by position
	// (grading.Windows): audit windows (nil is the whole log), the
	// commits their repositories were at when it began, the step marks.
	Step checks.Windows
	// Windows gives other checks of the lab (a mistake's evidence) their
	// windows in the same way; nil gives none.
	Windows func([]lab.Check) checks.Windows
}

// Progress is the learner's recorded progress.
type Progress interface {
	// State reads where the learner stands.
	State() (State, error)
	// Record records a round of step's checks, run while step was the
	// current step, and returns the state afterwards and whether the round
	// moved the learner on. A passing round moves the learner on; one of a
	// step that is no longer current (completed or left meanwhile: by a
	// request, or in another terminal) records nothing. A round in which a
	// required check could not run counts for nothing.
	Record(ctx context.Context, step string, results []checks.Result) (after State, moved bool, err error)
}

// Config is what a session needs. Lab, Shell, Terminal, Check and Progress
// are required.
type Config struct {
	Lab      *lab.Lab
	Shell    Shell
	Terminal Terminal
	Check    Checker
	Progress Progress
	// Probe runs the probe of a step that has one (lab.Probe), only when
	// the learner asks with lab check or lab next: a probe changes the
	// cluster, which a check after every command must not do. Nil makes
	// such a step's probe result an error.
	Probe grading.Prober
	// Catalog holds labctl's own words; nil means English.
	Catalog *msg.Catalog
	// Color enables ANSI colour in banners and styled Markdown; without
	// it the lab's Markdown is plain text.
	Color bool
	// Timing; zero values take the defaults below.
	Debounce, Recheck, Quiet time.Duration
}

// Defaults of Config's timing.
const (
	// DefaultDebounce is how long prompts must stop coming before a round.
	DefaultDebounce = 300 * time.Millisecond
	// DefaultRecheck is the pause before a passing round is confirmed.
	DefaultRecheck = 1500 * time.Millisecond
	// DefaultQuiet is how long output must pause before labctl writes a
	// banner at the prompt.
	DefaultQuiet = 150 * time.Millisecond
	// AckDeadline is the latest an acknowledgement is sent after its
	// request: the lab function stops waiting at 15 s.
	AckDeadline = 13 * time.Second
)

// Session runs one `labctl shell`.
type Session struct {
	cfg   Config
	texts atomic.Pointer[texts] // the lab's texts and labctl's words, in one language
	md    *Markdown

	trigger chan struct{} // a command ended: please check (buffered, 1)
	notices chan string   // text for the terminal from the background rounds

	outMu sync.Mutex // one writer of the terminal at a time
	inMu  sync.Mutex // held while a request is answered: keystrokes wait

	reqMu     sync.Mutex
	reqCancel context.CancelFunc // of the request being answered, or nil

	stepMu sync.Mutex     // one completion of a step at a time
	hints  map[string]int // hints shown per step

	// Owned by the output loop.
	scan     Scanner
	atPrompt bool
	pending  []string // banners waiting for a safe place
}

// New checks cfg and returns a session ready to Run.
func New(cfg Config) (*Session, error) {
	if cfg.Lab == nil || cfg.Shell == nil || cfg.Terminal == nil || cfg.Check == nil || cfg.Progress == nil {
		return nil, errors.New("session: Lab, Shell, Terminal, Check and Progress are required")
	}
	if len(cfg.Lab.Steps) == 0 {
		return nil, fmt.Errorf("lab %s has no steps", cfg.Lab.Metadata.Name)
	}
	setDefault(&cfg.Debounce, DefaultDebounce)
	setDefault(&cfg.Recheck, DefaultRecheck)
	setDefault(&cfg.Quiet, DefaultQuiet)
	cat := cfg.Catalog
	if cat == nil {
		cat = msg.New(msg.English)
	}
	s := &Session{
		cfg:     cfg,
		md:      NewMarkdown(cfg.Color),
		trigger: make(chan struct{}, 1),
		notices: make(chan string, 8),
		hints:   map[string]int{},
	}
	s.texts.Store(&texts{lab: cfg.Lab, cat: cat})
	return s, nil
}

// texts are what a session says: the lab in one language and labctl's
// words.
type texts struct {
	lab *lab.Lab
	cat *msg.Catalog
}

// SetLab makes the session speak from now on with l's texts and cat's
// words: the same lab in another language (lab.In), or the lab's file
// reloaded (labctl shell --watch). The progress says which step is current;
// the session shows that step as l words it.
func (s *Session) SetLab(l *lab.Lab, cat *msg.Catalog) error {
	if l == nil || len(l.Steps) == 0 {
		return errors.New("session: the new lab has no steps")
	}
	if cat == nil {
		cat = msg.New(msg.English)
	}
	s.texts.Store(&texts{lab: l, cat: cat})
	return nil
}

// Notify shows text on the terminal at the next safe place (before the next
// prompt), as the banners of the background rounds are shown. It does not
// wait: when too many notices wait already, text is dropped.
func (s *Session) Notify(text string) {
	select {
	case s.notices <- text:
	default:
	}
}

func (s *Session) lab() *lab.Lab         { return s.texts.Load().lab }
func (s *Session) catalog() *msg.Catalog { return s.texts.Load().cat }

// state reads the progress, its current step in the session's language.
func (s *Session) state() (State, error) {
	st, err := s.cfg.Progress.State()
	return s.inText(st), err
}

// inText is st with its current step as the session's lab words it: the
// progress may read the lab in another language.
func (s *Session) inText(st State) State {
	if st.Current == nil {
		return st
	}
	l := s.lab()
	for i, step := range l.Steps {
		if step.ID == st.Current.ID {
			st.Current = &l.Steps[i]
			break
		}
	}
	return st
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

// Run shows the current step, then passes keystrokes to the shell and the
// shell's output to the terminal until the output ends (the shell exited or
// was closed) or ctx is done. Checks run in the background meanwhile.
func (s *Session) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	st, err := s.state()
	if err != nil {
		return fmt.Errorf("reading progress: %w", err)
	}
	s.write(s.welcome(st))

	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer s.guard() // a panic must not leave the terminal raw
		s.rounds(ctx)
	}()
	go func() {
		defer wg.Done()
		s.forwardSizes(ctx)
	}()
	go s.input(ctx) // blocked in Read until the next keystroke; not waited for
	return s.output(ctx)
}

// guard gives the terminal back before a panic goes on.
func (s *Session) guard() {
	if r := recover(); r != nil {
		s.cfg.Terminal.Restore()
		panic(r)
	}
}

// write shows text, written with \n line ends, on the raw terminal.
func (s *Session) write(text string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_, _ = io.WriteString(s.cfg.Terminal, crlf(text))
}

// input passes keystrokes to the shell. A Ctrl-C abandons a request being
// answered; other keys wait until it is answered.
func (s *Session) input(ctx context.Context) {
	defer s.guard()
	buf := make([]byte, 4096)
	for {
		n, err := s.cfg.Terminal.Read(buf)
		if n > 0 {
			if ctx.Err() != nil {
				return
			}
			if containsByte(buf[:n], 0x03) {
				s.abandonRequest()
			}
			s.inMu.Lock()
			_, werr := s.cfg.Shell.Write(buf[:n])
			s.inMu.Unlock()
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func containsByte(p []byte, b byte) bool {
	for _, c := range p {
		if c == b {
			return true
		}
	}
	return false
}

// forwardSizes resizes the PTY to the terminal's size. The first resize is
// retried a few times: the shell may not have started yet.
func (s *Session) forwardSizes(ctx context.Context) {
	defer s.guard()
	first := true
	s.cfg.Terminal.WatchSize(ctx, func(rows, cols uint) {
		tries := 1
		if first {
			tries, first = 10, false
		}
		for i := 0; i < tries; i++ {
			if s.cfg.Shell.Resize(ctx, rows, cols) == nil {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(i+1) * 10 * time.Millisecond):
			}
		}
	})
}

// output passes the shell's output to the terminal, acting on marks and
// requests, and places banners. It returns when the output ends.
func (s *Session) output(ctx context.Context) error {
	defer s.guard()
	chunks := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32*1024)
			n, err := s.cfg.Shell.Read(buf)
			if n > 0 {
				select {
				case chunks <- buf[:n]:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr <- err
				}
				return
			}
		}
	}()

	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	pass := func(p []byte) {
		s.outMu.Lock()
		defer s.outMu.Unlock()
		_, _ = s.cfg.Terminal.Write(p)
	}
	for {
		select {
		case <-ctx.Done():
			s.cfg.Shell.Close()
			for range chunks {
			}
			return ctx.Err()
		case p, ok := <-chunks:
			if !ok {
				s.scan.Flush(pass)
				select {
				case err := <-readErr:
					return fmt.Errorf("reading the shell's output: %w", err)
				default:
					return nil
				}
			}
			s.takeNotices()
			s.scan.Feed(p, pass, func(m Mark) { s.onMark(ctx, m) })
			if s.scan.Pending() || len(s.pending) > 0 {
				quiet.Reset(s.cfg.Quiet)
			}
		case text := <-s.notices:
			s.pending = append(s.pending, text)
			quiet.Reset(s.cfg.Quiet)
		case <-quiet.C:
			s.scan.Flush(pass)
			if len(s.pending) > 0 && s.atPrompt {
				s.flushBanners()
				s.typeKeys(RedrawKey)
			}
		}
	}
}

// takeNotices moves the notices already sent into the waiting banners, so
// that a prompt in the next output finds them.
func (s *Session) takeNotices() {
	for {
		select {
		case text := <-s.notices:
			s.pending = append(s.pending, text)
		default:
			return
		}
	}
}

// onMark acts on one mark, in stream order.
func (s *Session) onMark(ctx context.Context, m Mark) {
	switch m.Kind {
	case PromptStart:
		// The prompt follows: a safe place for waiting banners.
		s.flushBanners()
		s.atPrompt = true
	case CommandStart:
		s.atPrompt = false
	case CommandDone:
		select {
		case s.trigger <- struct{}{}:
		default:
		}
	case Request:
		s.answer(ctx, m)
	}
}

// flushBanners writes the waiting banners on a line of their own.
func (s *Session) flushBanners() {
	for _, b := range s.pending {
		s.write("\n" + b)
	}
	s.pending = nil
}

// typeKeys writes keys into the shell's input between the learner's own.
func (s *Session) typeKeys(keys string) {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	_, _ = io.WriteString(s.cfg.Shell, keys)
}
