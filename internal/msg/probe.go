package msg

// The keys of a step's probe result (see lab.Probe): the run's command,
// its exit status, duration and last lines of output.
const (
	ProbeDescription   Key = "probe.description"
	ProbeRan           Key = "probe.ran"
	ProbeExited        Key = "probe.exited"
	ProbeTimedOut      Key = "probe.timedOut"
	ProbeNotStarted    Key = "probe.notStarted"
	ProbeSkipped       Key = "probe.skipped"
	ProbeSetupFailed   Key = "probe.setupFailed"
	ProbeRestoreFailed Key = "probe.restoreFailed"
	ProbeUnavailable   Key = "probe.unavailable"
	ProbeNoSetup       Key = "probe.noSetup"
	ProbeOutput        Key = "probe.output"
	// The run in the probe's broken world (lab.BrokenWorld).
	ProbeBrokenPassed   Key = "probe.brokenPassed"
	ProbeBrokenTimedOut Key = "probe.brokenTimedOut"
	ProbeBrokenFailed   Key = "probe.brokenFailed"
	// The same for a negated run ("! CMD"): a world where CMD must exit 0.
	ProbeSoundFailed   Key = "probe.soundFailed"
	ProbeSoundTimedOut Key = "probe.soundTimedOut"
	ProbeSoundPassed   Key = "probe.soundPassed"
	ProbeBusy          Key = "probe.busy"
)

func init() {
	for k, v := range map[Key]string{
		ProbeDescription: "runs %s as you, after changing the cluster",
		ProbeRan:         "%s exited with status 0 after %s",
		ProbeExited:      "%s exited with status %d after %s",
		ProbeTimedOut:    "%s did not finish within %s and was stopped",
		ProbeNotStarted:  "%s could not be started: %s. This is not your fault: check the lab with `labctl status` and repair it with `labctl up`",
		ProbeSkipped:     "%s was not run, because these checks must pass first: %s",
		ProbeSetupFailed: "the probe's setup, which changes the cluster before %s runs, failed (%s). This is not your fault: " +
			"check the lab with `labctl status`, repair it with `labctl up`, then check again",
		ProbeRestoreFailed: "the probe could not put the cluster back after %s ran (%s). This is not your fault: " +
			"`labctl reset --to` the current step puts the lab back",
		ProbeUnavailable: "this command does not run probes, so %s was not run; `labctl check` runs it",
		ProbeNoSetup:     "the check was not run, because the probe's setup failed",
		ProbeOutput:      "its last lines of output:\n%s",
		ProbeBrokenPassed: "first, in a broken world (%[2]s), %[1]s exited with status 0: it must exit non-zero there, " +
			"or it cannot tell a broken world from a working one",
		ProbeBrokenTimedOut: "first, in a broken world (%[3]s), %[1]s did not finish within %[2]s and was stopped: " +
			"it must exit non-zero there, in time",
		ProbeBrokenFailed: "first, in a broken world (%[2]s), %[1]s exited with status %[3]d, as it must",
		ProbeSoundFailed: "first, where it must succeed (%[2]s), %[1]s exited with a non-zero status: it must exit 0 there, " +
			"or it cannot tell a working world from a broken one",
		ProbeSoundTimedOut: "first, where it must succeed (%[3]s), %[1]s did not finish within %[2]s and was stopped: " +
			"it must exit 0 there, in time",
		ProbeSoundPassed: "first, where it must succeed (%[2]s), %[1]s exited with status 0, as it must",
		ProbeBusy: "%s was not run: the probes of a lab run one at a time, and the lab's probe lock stayed taken (%s). " +
			"This is not your fault: check again when the other check has ended",
	} {
		englishKeyed[k] = v
	}
	for k, v := range map[Key]string{
		ProbeDescription:    "クラスターを変えてから、あなたとして %s を実行する",
		ProbeRan:            "%s は %s で終了ステータス 0 で終わりました",
		ProbeExited:         "%[1]s は %[3]s 後に終了ステータス %[2]d で終わりました",
		ProbeTimedOut:       "%s は %s 以内に終わらなかったので止めました",
		ProbeNotStarted:     "%s を開始できませんでした: %s。あなたの作業の問題ではありません。ラボの状態を確認し、修復してください",
		ProbeSkipped:        "%s は実行していません。次のチェックが合格してから実行します: %s",
		ProbeSetupFailed:    "%s の実行前にクラスターを変えるテスト実行の準備が失敗しました (%s)。あなたの作業の問題ではありません。ラボの状態を確認し、修復してから、もう一度チェックしてください",
		ProbeRestoreFailed:  "%s の実行後、テスト実行でクラスターを元に戻せませんでした (%s)。あなたの作業の問題ではありません。現在のステップにリセットすると元に戻ります",
		ProbeUnavailable:    "コマンドのたびの自動のチェックではテスト実行をしないので、%s は実行していません。手動でチェックすると実行します",
		ProbeNoSetup:        "テスト実行の準備が失敗したので、このチェックは実行していません",
		ProbeOutput:         "出力の最後の行:\n%s",
		ProbeBrokenPassed:   "まず「%[2]s」という状態で実行したところ、%[1]s は終了ステータス 0 で終わりました。壊れている時にゼロ以外で終わらないと、正常な時と見分けられません",
		ProbeBrokenTimedOut: "まず「%[3]s」という状態で実行したところ、%[1]s は %[2]s 以内に終わらなかったので止めました。壊れている時も、時間内にゼロ以外の終了ステータスで終わるようにしてください",
		ProbeBrokenFailed:   "まず「%[2]s」という状態で実行したところ、%[1]s は正しく終了ステータス %[3]d で終わりました",
		ProbeSoundFailed:    "まず成功すべき「%[2]s」という状態で実行したところ、%[1]s はゼロ以外の終了ステータスで終わりました。正常な時に 0 で終わらないと、壊れている時と見分けられません",
		ProbeSoundTimedOut:  "まず成功すべき「%[3]s」という状態で実行したところ、%[1]s は %[2]s 以内に終わらなかったので止めました。正常な時は、時間内に終了ステータス 0 で終わるようにしてください",
		ProbeSoundPassed:    "まず成功すべき「%[2]s」という状態で実行したところ、%[1]s は正しく終了ステータス 0 で終わりました",
		ProbeBusy:           "%s は実行していません。ラボのテスト実行は一度に一つだけで、その順番を待つロックが空きませんでした (%s)。あなたの作業の問題ではありません。別のチェックが終わってから、もう一度チェックしてください",
	} {
		japaneseKeyed[k] = v
	}
}
