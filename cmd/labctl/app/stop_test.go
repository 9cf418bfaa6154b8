package app

import (
	"slices"
	"testing"
)

// stop, then what each command says of the stopped lab, then start.
func TestStopAndStart(t *testing.T) {
	isolate(t)
	env := &fakeEnv{state: upState()}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "stop")
	want{code: 0, noOut: true, errOut: []string{`Lab "two-steps" is stopped`, "/root and your progress are kept", "labctl start"}}.
		check(t, env, nil, code, out, errOut)
	if !slices.Equal(env.calls, []string{"stop two-steps"}) {
		t.Errorf("stop: calls %v", env.calls)
	}

	code, out, errOut = runFake(t, env, "--lab", twoSteps, "status")
	want{code: 3, out: []string{"cluster:  labctl-two-steps stopped\n", "sandbox:  exited\n", "run `labctl start` to resume it"}}.
		check(t, env, nil, code, out, errOut)
	code, out, _ = runFake(t, env, "--lab", twoSteps, "status", "-o", "json")
	var s labStatus
	decode(t, out, &s)
	if code != 3 || s.Up || !s.Stopped {
		t.Errorf("status -o json of a stopped lab: exit %d, %+v", code, s)
	}
	code, out, _ = runFake(t, env, "labs", "-o", "json")
	if code != 0 {
		t.Errorf("labs: exit %d", code)
	}

	for _, args := range [][]string{{"check"}, {"grade"}, {"exec", "true"}} {
		code, _, errOut := runFake(t, env, append([]string{"--lab", twoSteps}, args...)...)
		if code == 0 {
			t.Errorf("%v on a stopped lab: exit 0", args)
		}
		want{code: code, errOut: []string{"the lab is stopped: run `labctl start` to resume it"}}.check(t, env, args, code, "", errOut)
	}

	env.calls = nil
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "start")
	want{code: 0, noOut: true, errOut: []string{`Lab "two-steps" is up`}}.check(t, env, nil, code, out, errOut)
	if !slices.Equal(env.calls, []string{"start two-steps"}) {
		t.Errorf("start: calls %v", env.calls)
	}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "status")
	want{code: 0, out: []string{"cluster:  labctl-two-steps running\n"}}.check(t, env, nil, code, out, errOut)

	// Nothing to stop, nothing to start: the lab is not up.
	env = &fakeEnv{}
	code, _, errOut = runFake(t, env, "--lab", twoSteps, "stop")
	want{code: 2, errOut: []string{"run `labctl up`"}}.check(t, env, nil, code, "", errOut)
	code, _, errOut = runFake(t, env, "--lab", twoSteps, "start")
	want{code: 2, errOut: []string{"run `labctl up`"}}.check(t, env, nil, code, "", errOut)
}
