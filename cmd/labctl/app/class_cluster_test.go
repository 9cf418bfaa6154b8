package app

import (
	"errors"
	"slices"
	"testing"
)

// class cluster create makes the cluster and prints the class up command
// that uses it; run again it reuses it; delete removes it, and says when
// there is none.
func TestClassCluster(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "class", "cluster", "create", "--name", "room-2", "--workers", "2")
	want{code: 0, out: []string{"labctl class up --kubeconfig /state/room-2/kubeconfig --context kind-room-2 --learners 3\n"},
		errOut: []string{"Class cluster room-2 is ready", "labctl class cluster delete --name room-2"}}.check(t, env, nil, code, out, errOut)
	code, _, errOut = runFake(t, env, "class", "cluster", "create", "--name", "room-2", "--workers", "1")
	want{code: 0, errOut: []string{"was made before with 2 worker(s)"}}.check(t, env, nil, code, out, errOut)
	code, out, _ = runFake(t, env, "class", "cluster", "create")
	want{code: 0, out: []string{"--context kind-labctl-class "}}.check(t, env, nil, code, out, "")
	code, out, errOut = runFake(t, env, "class", "cluster", "delete", "--name", "room-2")
	want{code: 0, noOut: true}.check(t, env, nil, code, out, errOut)
	code, out, errOut = runFake(t, env, "class", "cluster", "delete", "--name", "room-2")
	want{code: 0, noOut: true, errOut: []string{"There is no class cluster room-2: nothing to remove."}}.check(t, env, nil, code, out, errOut)
	if want := []string{"class cluster create room-2 2", "class cluster create room-2 1", "class cluster create labctl-class 0",
		"class cluster delete room-2", "class cluster delete room-2"}; !slices.Equal(env.calls, want) {
		t.Errorf("calls %q, want %q", env.calls, want)
	}
}

func TestClassClusterErrors(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		want want
	}{
		{[]string{"class", "cluster", "create", "--name", "Room_2"}, usage(`class cluster name "Room_2" is not valid`, "labctl class cluster create")},
		{[]string{"class", "cluster", "create", "--workers", "-1"}, usage("--workers -1: give 0 or more worker nodes", "labctl class cluster create")},
		{[]string{"class", "cluster", "delete", "--name", "-x"}, usage("is not valid", "labctl class cluster delete")},
		{[]string{"class", "cluster", "create", "extra"}, usage("unknown command", "labctl class cluster create")},
	} {
		env := &fakeEnv{}
		code, out, errOut := runFake(t, env, tc.args...)
		tc.want.check(t, env, tc.args, code, out, errOut)
	}
	// What the machine lacks is said as the environment words it, once, with
	// no stack trace.
	env := &fakeEnv{clusterErr: errors.New("image labctl/node:v1 is not on this machine: make them with `labctl images build`")}
	code, out, errOut := runFake(t, env, "class", "cluster", "create")
	want{code: 2, noOut: true, errOut: []string{"image labctl/node:v1 is not on this machine"}}.check(t, env, nil, code, out, errOut)
}
