// Package shell owns the stream logic of `labctl shell`: it scans the
// sandbox shell's output for prompt marks and private requests, runs the
// current step's checks in the background after every command, and writes
// banners, step texts and answers to the learner's terminal. It does not
// talk to Docker or set terminal modes; provision/docker and internal/terminal do, behind the small
// interfaces declared here.
//
// # The protocol between the sandbox shell and labctl
//
// Everything travels in-band over the PTY: there is no socket, file or
// network path from the sandbox to the host. The shell integration
// (images/sandbox/labctl.sh, installed at /etc/profile.d/labctl.sh and
// sourced from /etc/bash.bashrc) writes to the terminal:
//
//	ESC ] 133 ; C BEL              from PS0: a command was read and starts
//	ESC ] 133 ; D ; <code> BEL     from PROMPT_COMMAND: the command ended with <code>
//	ESC ] 133 ; A BEL              from PROMPT_COMMAND: the prompt follows
//	ESC ] 7707 ; labctl ; <verb> ; <nonce> BEL
//	                               from the lab function: a request
//
// ST (ESC \) ends a sequence as well as BEL does. The 133 marks are
// standard (the "semantic prompt" marks several terminals understand) and
// pass through to the learner's terminal unchanged; the private 7707
// requests are stripped. Every other byte passes through unchanged and in
// order, whatever the encoding, however the stream is split into reads.
//
// Verbs: check (run the step's checks now and show each result), hint (the
// step's hints one at a time, in order, counted per shell), step (the step's title and instructions),
// why (why the step matters, as the lab's why says), next
// (move on when the step's checks pass, else say what is missing) and status
// (where the learner stands in the lab). The nonce is a token of letters,
// digits and '-' chosen by the lab function.
//
// The host answers on the learner's terminal, directly, after every byte
// the shell wrote before the request; then it writes the acknowledgement
//
//	<nonce> BEL
//
// into the PTY's input. The lab function, which turned echo off before
// sending the request, reads up to BEL (at most 15 s), restores the terminal
// and returns, so the answer is on the screen before the next prompt. While
// a request is being answered the host holds back the learner's keystrokes
// (they reach the shell after the acknowledgement), except Ctrl-C, which
// passes at once and abandons the request. An acknowledgement that would
// come later than AckDeadline after the request is not sent, so it cannot
// land in a later command line.
//
// Requests are only hints to act: the host runs the checks itself, through
// its own checker, every time. Nothing the sandbox writes can make a step
// pass. Outside `labctl shell` the lab function finds no LABCTL_SHELL=1 in
// its environment and says it works only inside `labctl shell`; that
// variable only selects the message and is never trusted for grading.
//
// # Checks after every command
//
// Each CommandDone mark asks for a round of the current step's checks. The
// request is debounced (a burst of prompts gives one round) and never
// delays output. When a round passes, the checks run once more after a
// short pause, and only a second pass completes the step: a state that
// flaps does not pass. Progress is recorded as `labctl check` records it
// (a round in which a check could not run counts for nothing): automatic
// rounds record only a completed step, so attempts count the learner's own
// `lab check`, `lab next` and `labctl check`. Moving on runs the next step's
// setup script. The completion banner and the next step's text are
// written where they cannot break a prompt: just before the next prompt
// when a command is running, or, when the shell sits at its prompt,
// on a fresh line after which the shell is asked to redraw its prompt and
// the learner's unfinished line (a key bound by labctl.sh with bind -x).
package shell

// The private request sequence is ESC ] requestOSC ; requestTag ; verb ; nonce BEL.
const (
	requestOSC = "7707"
	requestTag = "labctl"
)

// RedrawKey is the key sequence labctl.sh binds (bind -x) to a function
// that does nothing, so that readline redraws the prompt and the line being
// edited after labctl wrote a banner at the prompt.
const RedrawKey = "\x1b[9999~"

// The verbs of the lab function.
const (
	VerbCheck  = "check"
	VerbHint   = "hint"
	VerbStep   = "step"
	VerbNext   = "next"
	VerbStatus = "status"
	VerbWhy    = "why"
)
