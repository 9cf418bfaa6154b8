package provision

import (
	"bytes"
	"encoding/binary"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// frameOf is one frame of nodeSession's protocol.
func frameOf(t byte, data []byte) []byte {
	b := []byte{t, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(data)))
	return append(b, data...)
}

// session runs nodeSession with perl, as a node's listener does, sends it
// the command words, stdin and its end, and reads its frames: stdout,
// stderr and the exit code.
func session(t *testing.T, tty bool, stdin []byte, words ...string) (stdout, stderr string, code string) {
	t.Helper()
	perl, err := exec.LookPath("perl")
	if err != nil {
		t.Fatalf("the node's session program needs perl, which every kind node has: %v", err)
	}
	var in bytes.Buffer
	in.Write(frameOf('H', []byte(strings.Join(append([]string{map[bool]string{false: "0", true: "1"}[tty], "xterm", "24", "80"}, words...), "\x00"))))
	for len(stdin) > 0 {
		n := min(len(stdin), 16384)
		in.Write(frameOf('I', stdin[:n]))
		stdin = stdin[n:]
	}
	in.Write(frameOf('E', nil))
	cmd := exec.Command(perl, "-e", nodeSession)
	// The connection stays open until the exit code came, as a client's.
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = io.Copy(pw, &in) }()
	cmd.Stdin = pr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var o, e strings.Builder
	for {
		head := make([]byte, 5)
		if _, err := io.ReadFull(out, head); err != nil {
			t.Fatalf("the session ended without an exit code (stdout %q, stderr %q): %v", o.String(), e.String(), err)
		}
		data := make([]byte, binary.BigEndian.Uint32(head[1:]))
		if _, err := io.ReadFull(out, data); err != nil {
			t.Fatal(err)
		}
		switch head[0] {
		case 'O':
			o.Write(data)
		case 'R':
			e.Write(data)
		case 'X':
			pw.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("the session program: %v", err)
			}
			return o.String(), e.String(), string(data)
		default:
			t.Fatalf("frame of type %q", head[0])
		}
	}
}

// The node's session program runs the command asked in a clean
// environment, carries stdout and stderr apart, the command's exit code,
// and stdin to its end, also more of it than a pipe holds while the
// command writes as much back (tee).
func TestNodeSession(t *testing.T) {
	out, errOut, code := session(t, false, nil, "sh", "-c", "echo out; echo err >&2; echo $HOME $FOO; exit 7")
	if out != "out\n/root\n" || errOut != "err\n" || code != "7" {
		t.Errorf("stdout %q, stderr %q, exit %s; want out and the clean HOME, err, 7", out, errOut, code)
	}
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 1<<16) // 1 MiB
	out, _, code = session(t, false, big, "cat")
	if out != string(big) || code != "0" {
		t.Errorf("cat of 1 MiB of stdin: %d bytes back, exit %s", len(out), code)
	}
	_, _, code = session(t, false, nil, "sh", "-c", "kill -TERM $$")
	if code != "143" {
		t.Errorf("a command ended by SIGTERM: exit %s, want 143", code)
	}
	_, errOut, code = session(t, false, nil, "no-such-command")
	if code != "127" || !strings.Contains(errOut, "no-such-command") {
		t.Errorf("a command that does not exist: exit %s, stderr %q", code, errOut)
	}
	// With a terminal, the command runs in a PTY of the size asked, its
	// words quoted for the shell that starts it.
	out, _, code = session(t, true, nil, "sh", "-c", `tty; stty size; echo "$0"; exit 4`, "it's")
	if !strings.Contains(out, "/dev/pts/") || !strings.Contains(out, "24 80") || !strings.Contains(out, "it's") || code != "4" {
		t.Errorf("with a terminal: output %q, exit %s; want a PTY of 24 rows and 80 columns, it's, and 4", out, code)
	}
}
