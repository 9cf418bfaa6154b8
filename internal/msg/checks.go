package msg

// The keys of the checks' messages. Each table below has a text for every
// key; a format may take its arguments in another order in another
// language (%[2]s), but always the same arguments with the same verbs.
const (
	ListSeparator Key = "list.separator"

	// Parts of messages.
	WhereIn       Key = "where.in"
	WhereInAtHEAD Key = "where.inAtHEAD"
	FileAtRev     Key = "where.fileAtRev"
	FromRef       Key = "value.fromRef"
	FromRefSuffix Key = "value.fromRefSuffix"
	SizeMiB       Key = "size.mib"
	SizeBytes     Key = "size.bytes"
	RangeExactly  Key = "range.exactly"
	RangeBetween  Key = "range.between"
	RangeAtLeast  Key = "range.atLeast"
	RangeAtMost   Key = "range.atMost"
	RangeAny      Key = "range.any"
	OutputSuffix  Key = "command.outputSuffix"

	// Kinds of files and of values.
	ModeRegular Key = "mode.regular"
	ModeDir     Key = "mode.dir"
	ModeSymlink Key = "mode.symlink"
	ModeFIFO    Key = "mode.fifo"
	ModeSocket  Key = "mode.socket"
	ModeDevice  Key = "mode.device"
	ModeSpecial Key = "mode.special"
	TypeNull    Key = "type.null"
	TypeString  Key = "type.string"
	TypeBoolean Key = "type.boolean"
	TypeNumber  Key = "type.number"
	TypeInteger Key = "type.integer"
	TypeObject  Key = "type.object"
	TypeArray   Key = "type.array"

	// Reading the learner's files.
	LeadsOutside        Key = "file.leadsOutside"
	NotExist            Key = "file.notExist"
	NotRegularFile      Key = "file.notRegular"
	ChangedWhileReading Key = "file.changed"
	TooLarge            Key = "file.tooLarge"
	NotValidJSON        Key = "doc.notJSON"
	JSONTrailing        Key = "doc.jsonTrailing"
	NotValidYAML        Key = "doc.notYAML"

	// File checks.
	FileExpectExist     Key = "file.expectExist"
	FileExpectAbsent    Key = "file.expectAbsent"
	FileExpectRegular   Key = "file.expectRegular"
	FileExpectDir       Key = "file.expectDir"
	FileExpectExec      Key = "file.expectExec"
	FileExpectNotExec   Key = "file.expectNotExec"
	FileExpectOutside   Key = "file.expectOutside"
	FileExpectExactly   Key = "file.expectExactly"
	FileExpectContains  Key = "file.expectContains"
	FileExpectMatch     Key = "file.expectMatch"
	FileExpectNotMatch  Key = "file.expectNotMatch"
	FileExpectLines     Key = "file.expectLines"
	FileExpectScript    Key = "file.expectScript"
	FileExpectProbeRun  Key = "file.expectProbeRun"
	FileModifiedLater   Key = "file.modifiedLater"
	FileNoProbe         Key = "file.noProbe"
	AssertAbsent        Key = "assert.absent"
	AssertNotFound      Key = "assert.notFound"
	AssertNone          Key = "assert.none"
	AssertType          Key = "assert.type"
	AssertEquals        Key = "assert.equals"
	AssertNotEquals     Key = "assert.notEquals"
	AssertStringMatch   Key = "assert.stringMatch"
	AssertMatch         Key = "assert.match"
	AssertStringNoMatch Key = "assert.stringNoMatch"
	AssertNoMatch       Key = "assert.noMatch"
	AssertBoundNumber   Key = "assert.boundNumber"
	AssertCompareType   Key = "assert.compareType"
	AssertCompare       Key = "assert.compare"
	AssertSubsetObject  Key = "assert.subsetObject"
	AssertSubsetType    Key = "assert.subsetType"
	AssertSubset        Key = "assert.subset"
	AssertStoredAs      Key = "assert.storedAs"

	// Git checks.
	GitExpectRepo      Key = "git.expectRepo"
	GitExpectNoRepo    Key = "git.expectNoRepo"
	GitNoRepoAt        Key = "git.noRepoAt"
	GitCommits         Key = "git.commits"
	GitCommitsSince    Key = "git.commitsSince"
	GitStepHeadGone    Key = "git.stepHeadGone"
	GitStepNotBegun    Key = "git.stepNotBegun"
	GitStepStartLate   Key = "git.stepStartLate"
	AuditBeforeStart   Key = "audit.beforeStart"
	AuditApplyAgain    Key = "audit.applyAgain"
	GitTracked         Key = "git.tracked"
	GitNoCommits       Key = "git.noCommits"
	GitRevNotFound     Key = "git.revNotFound"
	GitFileNotFoundAt  Key = "git.fileNotFoundAt"
	GitFileTooLarge    Key = "git.fileTooLarge"
	GitConfigUnset     Key = "git.configUnset"
	GitHistoryTooLong  Key = "git.historyTooLong"
	GitHistoryOfTooBig Key = "git.historyOfTooLong"
	GitBare            Key = "git.bare"
	GitNotClean        Key = "git.notClean"
	GitNotDirty        Key = "git.notDirty"
	GitdirFile         Key = "git.gitdirFile"
	GitDirNotDir       Key = "git.dirNotDir"
	GitBorrows         Key = "git.borrows"
	GitObjectMissing   Key = "git.object-missing"
	GitHeadNotRegular  Key = "git.headNotRegular"
	GitSymlink         Key = "git.symlink"
	GitOtherDir        Key = "git.otherDir"
	GitObjectTooLarge  Key = "git.objectTooLarge"
	GitRepoTooLarge    Key = "git.repoTooLarge"
	ScopeIn            Key = "git.scopeIn"
	ScopeTouching      Key = "git.scopeTouching"
	WhichLast          Key = "git.whichLast"
	WhichFirst         Key = "git.whichFirst"
	MsgNoCommits       Key = "git.msgNoCommits"
	MsgOne             Key = "git.msgOne"
	MsgAll             Key = "git.msgAll"
	MsgAny             Key = "git.msgAny"
	ProblemShort       Key = "git.problemShort"
	ProblemMatch       Key = "git.problemMatch"
	DescMatch          Key = "git.descMatch"
	DescMinLength      Key = "git.descMinLength"
	DescExist          Key = "git.descExist"
	DescAnd            Key = "git.descAnd"

	// Kube checks and references.
	KubeExpectExist   Key = "kube.expectExist"
	KubeExpectAbsent  Key = "kube.expectAbsent"
	KubeLabelMissing  Key = "kube.labelMissing"
	KubeLabelWrong    Key = "kube.labelWrong"
	KubeCount         Key = "kube.count"
	KubeFileNotLive   Key = "kube.fileNotLive"
	KubeFileNotInFile Key = "kube.fileNotInFile"
	KubeFileDiffers   Key = "kube.fileDiffers"
	KubeFileAbsent    Key = "kube.fileAbsent"
	KubeEvery         Key = "kube.every"
	KubeEveryIn       Key = "kube.everyIn"
	KubeMatching      Key = "kube.matching"
	KubeMatchingIn    Key = "kube.matchingIn"
	AccessExpectYes   Key = "access.expectYes"
	AccessExpectNo    Key = "access.expectNo"
	// Permissions checks: the findings (a []Text) and how many more.
	PermissionsFailed  Key = "permissions.failed"
	PermissionsExtra   Key = "permissions.extra"
	PermissionsMissing Key = "permissions.missing"
	PermissionsMore    Key = "permissions.more"
	ReachExpectOpen    Key = "reach.expectOpen"
	ReachExpectClosed  Key = "reach.expectClosed"
	ReachFrom          Key = "reach.from"
	ReachFromLabelled  Key = "reach.fromLabelled"
	MatrixWrong        Key = "matrix.wrong"
	MatrixCell         Key = "matrix.cell"
	MatrixOpen         Key = "matrix.open"
	MatrixClosed       Key = "matrix.closed"
	MatrixWhy          Key = "matrix.why"
	MatrixFrom         Key = "matrix.from"
	MatrixFromLabels   Key = "matrix.fromLabels"
	RefFailed          Key = "ref.failed"
	RefObjectNotFound  Key = "ref.objectNotFound"
	RefFieldNotFound   Key = "ref.fieldNotFound"

	// Command checks.
	CommandNoDir  Key = "command.noDir"
	CommandExit   Key = "command.exit"
	CommandStdout Key = "command.stdout"

	// Service checks of a node.
	ServiceRuns       Key = "service.runs"
	ServiceNotRunning Key = "service.notRunning"
	ServiceRunning    Key = "service.running"

	// Checks that could not finish.
	NotRun       Key = "engine.notRun"
	TimedOut     Key = "engine.timedOut"
	CallTimedOut Key = "engine.callTimedOut"
	NotFinished  Key = "engine.notFinished"
)

// keyed holds the keyed texts of every language.
var keyed = map[Lang]map[Key]string{English: englishKeyed, Japanese: japaneseKeyed}

var englishKeyed = map[Key]string{
	ListSeparator: ", ",

	WhereIn:       "in %s",
	WhereInAtHEAD: "in %s at HEAD",
	FileAtRev:     "%s at %s",
	FromRef:       "%s (from %s)",
	FromRefSuffix: " (from %s)",
	SizeMiB:       "%d MiB",
	SizeBytes:     "%d bytes",
	RangeExactly:  "exactly %d",
	RangeBetween:  "between %d and %d",
	RangeAtLeast:  "at least %d",
	RangeAtMost:   "at most %d",
	RangeAny:      "any number of",
	OutputSuffix:  "; output: %s",

	ModeRegular: "regular file",
	ModeDir:     "directory",
	ModeSymlink: "symbolic link",
	ModeFIFO:    "named pipe (FIFO)",
	ModeSocket:  "socket",
	ModeDevice:  "device",
	ModeSpecial: "special file",
	TypeNull:    "null",
	TypeString:  "string",
	TypeBoolean: "boolean",
	TypeNumber:  "number",
	TypeInteger: "integer",
	TypeObject:  "object",
	TypeArray:   "array",

	LeadsOutside:        "%s leads outside the learner's files (to %s)",
	NotExist:            "%s does not exist",
	NotRegularFile:      "%s is a %s, not a regular file",
	ChangedWhileReading: "%s changed while being read; expected a regular file",
	TooLarge:            "%s is larger than %s, more than any check reads",
	NotValidJSON:        "%s is not valid JSON: %v",
	JSONTrailing:        "%s is not valid JSON: unexpected data after the first value",
	NotValidYAML:        "%s is not valid YAML: %v",

	FileExpectExist:     "expected %s to exist, found nothing there",
	FileExpectAbsent:    "expected %s to be absent, found a %s",
	FileExpectRegular:   "expected %s to be a regular file, found a %s",
	FileExpectDir:       "expected %s to be a directory, found a %s",
	FileExpectExec:      "expected %s to be executable, found mode %04o",
	FileExpectNotExec:   "expected %s not to be executable, found mode %04o",
	FileExpectOutside:   "expected %s to lie outside %s, found it resolves to %s",
	FileExpectExactly:   "expected %s to contain exactly %s%s, found %s",
	FileExpectContains:  "expected %s to contain %q, found no such text",
	FileExpectMatch:     "expected %s to match %q, found no match",
	FileExpectNotMatch:  "expected %s not to match %q, found %s",
	FileExpectLines:     "expected %s to have %s non-empty lines, found %d",
	FileExpectScript:    "expected at least %s of the letters in %s to be %s, found %s (%d of %d; letters in code are not counted, and a word of ASCII letters counts as one unless the script is Latin)",
	FileExpectProbeRun:  "expected %s to be written by the probe's run, which started at %s, found it last modified at %s, before the run",
	FileModifiedLater:   "expected %s to be written by the probe's run, found it last modified at %s, after this check ran (%s): its time was set by hand",
	FileNoProbe:         "%s must be written by the step's probe, which did not run in this round; `lab check` in the shell, or `labctl check`, runs it",
	AssertAbsent:        "expected %s to be absent %s, found %s",
	AssertNotFound:      "%s not found %s",
	AssertNone:          "none of the %d values of %s %s holds; the first: %s",
	AssertType:          "expected %s to be of type %s %s, found %s %s",
	AssertEquals:        "expected %s = %s %s, found %s",
	AssertNotEquals:     "expected %s != %s %s, found %s",
	AssertStringMatch:   "expected %s to be a string matching %q %s, found %s %s",
	AssertMatch:         "expected %s to match %q %s, found %s",
	AssertStringNoMatch: "expected %s to be a string not matching %q %s, found %s %s",
	AssertNoMatch:       "expected %s not to match %q %s, found %s",
	AssertBoundNumber:   "expected a number for %s, found %s",
	AssertCompareType:   "expected %s %s %s %s, found %s %s",
	AssertCompare:       "expected %s %s %s %s, found %s",
	AssertSubsetObject:  "expected an object for subsetOf, found %s",
	AssertSubsetType:    "expected %s to be an object within %s %s, found %s %s",
	AssertSubset:        "expected every entry of %s to appear in %s %s, found %s: %s",
	AssertStoredAs:      "expected %s, as stored, to be %s %s, found %s (they differ at %s)",

	GitExpectRepo:      "expected a git repository at %s, found none",
	GitExpectNoRepo:    "expected no git repository at %s, found one",
	GitNoRepoAt:        "no git repository at %s",
	GitCommits:         "expected %s commits reachable from HEAD in %s, found %d",
	GitCommitsSince:    "expected %s new commits in %s since the step began (on top of %s), found %d",
	GitStepNotBegun:    "this step has not begun yet, so no commit in %s is new for it: labctl counts them from when the step becomes your current one",
	AuditApplyAgain:    " (%[1]s sends nothing when nothing changed; %[2]s always does)",
	AuditBeforeStart:   "labctl cannot tell whether this was done in this step: the API server's record holds it only from before %[1]s, when labctl saw the step begin (the step before was checked after it). This is not counted against you: do it again now%[2]s, and check again",
	GitStepStartLate:   "labctl cannot tell which commits in %[1]s are this step's: it did not see the step begin, and noted the repository only later, at %[2]s. This is not counted against you: make this step's commit now, on top of %[2]s, and check again",
	GitStepHeadGone:    "%[2]s was at commit %[1]s when the step began, and HEAD's history no longer holds it: it was rewritten (git commit --amend, rebase or reset). Keep that commit and make new ones on top of it",
	GitTracked:         "expected %s to be tracked at HEAD in %s, found it is not",
	GitNoCommits:       "the repository at %s has no commits",
	GitRevNotFound:     "revision %s not found in %s",
	GitFileNotFoundAt:  "%s not found at %s",
	GitFileTooLarge:    "%s at %s is larger than %d MiB, more than any check reads",
	GitConfigUnset:     "expected %s to be set in %s/.git/config, found it unset or empty",
	GitHistoryTooLong:  "the history has more than %d commits, more than any check walks",
	GitHistoryOfTooBig: "the history of %s has more than %d commits, more than any check walks",
	GitBare:            "%s is a bare repository, expected a work tree",
	GitNotClean:        "expected a clean work tree in %s, found %d change(s): %s",
	GitNotDirty:        "expected uncommitted changes in %s, found a clean work tree",
	GitdirFile:         "%s is a file that points to a repository elsewhere (gitdir:); expected the repository's own .git directory",
	GitDirNotDir:       "%s is a %s; expected the repository's own .git directory",
	GitBorrows:         "%s has %s, which borrows another repository's files; a lab's repository must hold its own",
	GitObjectMissing:   "%s lacks objects its history needs; `git fsck` lists what is missing",
	GitHeadNotRegular:  "%s/HEAD is a %s, not a regular file",
	GitSymlink:         "%s is a symbolic link (to %s); git reads a repository's own files only",
	GitOtherDir:        "%s refers to another directory (%s); a lab's repository must hold its own files",
	GitObjectTooLarge:  "%s object %s in %s is larger than %s, more than any check reads",
	GitRepoTooLarge:    "%s, with its work tree, is larger than %s, more than a check reads of a repository outside /root; keep large files out of it",
	ScopeIn:            "in %s",
	ScopeTouching:      "touching %s in %s",
	WhichLast:          "last",
	WhichFirst:         "first",
	MsgNoCommits:       "expected commits %s, found none",
	MsgOne:             "expected the message of the %s commit %s (%s) to %s",
	MsgAll:             "expected every commit message %s to %s in %s",
	MsgAny:             "expected a commit message %s to %s, found none among %d commit(s); the last: %s",
	ProblemShort:       "be at least %d characters long, found %d: %s",
	ProblemMatch:       "match %q, found %s",
	DescMatch:          "match %q",
	DescMinLength:      "be at least %d characters long",
	DescExist:          "exist",
	DescAnd:            "%s and %s",

	KubeExpectExist:    "expected %s to exist, found no such object in the cluster",
	KubeExpectAbsent:   "expected %s to be absent, found it in the cluster",
	KubeLabelMissing:   "expected label %s=%s on %s, found no such label",
	KubeLabelWrong:     "expected label %s=%s on %s, found %s=%v",
	KubeCount:          "expected %s: %s, found %d%s",
	KubeFileNotLive:    "%[1]s holds %[2]s, which the cluster does not: the file is not what is live; apply it, or remove the object from it",
	KubeFileNotInFile:  "%[1]s is in the cluster, but %[2]s does not hold it: the file is not what is live; write the object in the file and apply it, or delete it from the cluster",
	KubeFileDiffers:    "%[1]s in the cluster is not what %[2]s holds: at %[3]s the cluster has %[4]s, the file %[5]s; fix the file and apply it, so that the file holds what is live",
	KubeFileAbsent:     "nothing",
	KubeEvery:          "every %s",
	KubeEveryIn:        "every %s in %s",
	KubeMatching:       "every %s matching %q",
	KubeMatchingIn:     "every %s in %s matching %q",
	AccessExpectYes:    "expected %s to answer yes; the API server answers no",
	AccessExpectNo:     "expected %s to answer no; the API server answers yes",
	PermissionsFailed:  "the rights in the lab's namespaces are not the ones the lab states: %s%s",
	PermissionsExtra:   "%s may %s %s in %s, which the lab does not allow (%s)",
	PermissionsMissing: "%s may not %s %s in %s, which the lab requires",
	PermissionsMore:    ", and %d more",
	ReachExpectOpen:    "expected %s to connect to %s; it could not: %s",
	ReachExpectClosed:  "expected %s not to connect to %s; it connected",
	ReachFrom:          "a new Pod in %s",
	ReachFromLabelled:  "a new Pod in %s labelled %s",
	MatrixWrong:        "%d of %d paths are not as expected: %s",
	MatrixCell:         "from %s (%s) to %s (%s): expected %s, found %s",
	MatrixOpen:         "open",
	MatrixClosed:       "closed",
	MatrixWhy:          "closed: %s",
	MatrixFrom:         "a Pod in %s with no labels",
	MatrixFromLabels:   "a Pod in %s labelled %s",
	RefFailed:          "reference %s: %s",
	RefObjectNotFound:  "%s not found in the cluster",
	RefFieldNotFound:   "%s not found in %s",

	CommandNoDir:  "expected a directory %s to run %s in, found none",
	CommandExit:   "expected exit code %d from %s, found %d%s",
	CommandStdout: "expected the output of %s to match %q, found %s",

	ServiceRuns:       "%s runs on node %s: %s",
	ServiceNotRunning: "expected %s to run on node %s, found no process of the node in its control group",
	ServiceRunning:    "expected %s not to run on node %s, found %s in its control group",

	NotRun:   "not run: %v",
	TimedOut: "timed out after %s",
	// A request of the check's that ran out of its own bound, before the
	// check's deadline.
	CallTimedOut: "a request got no answer in time: %v",
	NotFinished:  "not finished: %v",
}

var japaneseKeyed = map[Key]string{
	ListSeparator: "、",

	WhereIn:       "%s の",
	WhereInAtHEAD: "HEAD の %s の",
	FileAtRev:     "%[2]s の %[1]s",
	FromRef:       "%s (%s より)",
	FromRefSuffix: " (%s より)",
	SizeMiB:       "%d MiB",
	SizeBytes:     "%d バイト",
	RangeExactly:  "ちょうど %d",
	RangeBetween:  "%d 以上 %d 以下",
	RangeAtLeast:  "%d 以上",
	RangeAtMost:   "%d 以下",
	RangeAny:      "任意の数",
	OutputSuffix:  "。出力: %s",

	ModeRegular: "通常のファイル",
	ModeDir:     "ディレクトリ",
	ModeSymlink: "シンボリックリンク",
	ModeFIFO:    "名前付きパイプ (FIFO)",
	ModeSocket:  "ソケット",
	ModeDevice:  "デバイス",
	ModeSpecial: "特殊ファイル",
	TypeNull:    "null",
	TypeString:  "文字列",
	TypeBoolean: "真偽値",
	TypeNumber:  "数値",
	TypeInteger: "整数",
	TypeObject:  "オブジェクト",
	TypeArray:   "配列",

	LeadsOutside:        "%s は学習者のファイルの外を指しています (行き先: %s)",
	NotExist:            "%s が存在しません",
	NotRegularFile:      "%s は通常のファイルではなく、%sです",
	ChangedWhileReading: "%s が読み取りの途中で変わりました。通常のファイルにしてください",
	TooLarge:            "%s は %s より大きく、チェックが読める大きさを超えています",
	NotValidJSON:        "%s は正しい JSON ではありません。パーサーの報告: %v",
	JSONTrailing:        "%s は正しい JSON ではありません: 最初の値の後に余分なデータがあります",
	NotValidYAML:        "%s は正しい YAML ではありません。パーサーの報告: %v",

	FileExpectExist:     "%s があるはずですが、何もありません",
	FileExpectAbsent:    "%s は無いはずですが、%sがあります",
	FileExpectRegular:   "%s は通常のファイルのはずですが、%sです",
	FileExpectDir:       "%s はディレクトリのはずですが、%sです",
	FileExpectExec:      "%s は実行可能のはずですが、モードは %04o です",
	FileExpectNotExec:   "%s は実行可能でないはずですが、モードは %04o です",
	FileExpectOutside:   "%s は %s の外にあるはずですが、%s を指しています",
	FileExpectExactly:   "%s の内容はちょうど %s%s のはずですが、%s でした",
	FileExpectContains:  "%s に %q が含まれるはずですが、見つかりません",
	FileExpectMatch:     "%s は %q に一致するはずですが、一致する箇所がありません",
	FileExpectNotMatch:  "%s は %q に一致しないはずですが、%s があります",
	FileExpectLines:     "%s の空でない行の数は %s のはずですが、%d でした",
	FileExpectScript:    "%[2]s の文字の %[1]s 以上が%[3]sのはずですが、%[4]s (%[6]d 文字中 %[5]d 文字。コードの中の文字は数えず、ラテン文字の判定以外では半角英字の1語を1文字と数えます) でした",
	FileExpectProbeRun:  "%[1]s は %[2]s に始まったテスト実行で書かれるはずですが、最終更新は実行前の %[3]s でした",
	FileModifiedLater:   "%[1]s はテスト実行で書かれるはずですが、最終更新がこのチェックの時刻 (%[3]s) より後の %[2]s になっています。時刻が手で設定されています",
	FileNoProbe:         "%s はこのステップのテスト実行で書かれるはずですが、今回のチェックではテスト実行をしていません。テスト実行は、コマンドのたびの自動のチェックではなく、手動でチェックしたときだけ行います",
	AssertAbsent:        "%[2]s %[1]s は無いはずですが、%[3]s がありました",
	AssertNotFound:      "%[2]s %[1]s が見つかりません",
	AssertNone:          "%[3]s %[2]s の %[1]d 個の値のどれも当てはまりません (最初の値: %[4]s)",
	AssertType:          "%[3]s %[1]s は%[2]sのはずですが、%[4]sの %[5]s でした",
	AssertEquals:        "%[3]s %[1]s は %[2]s のはずですが、%[4]s でした",
	AssertNotEquals:     "%[3]s %[1]s は %[2]s 以外のはずですが、%[4]s でした",
	AssertStringMatch:   "%[3]s %[1]s は %[2]q に一致する文字列のはずですが、%[4]sの %[5]s でした",
	AssertMatch:         "%[3]s %[1]s は %[2]q に一致するはずですが、%[4]s でした",
	AssertStringNoMatch: "%[3]s %[1]s は %[2]q に一致しない文字列のはずですが、%[4]sの %[5]s でした",
	AssertNoMatch:       "%[3]s %[1]s は %[2]q に一致しないはずですが、%[4]s でした",
	AssertBoundNumber:   "%s には数値が必要ですが、%s でした",
	AssertCompareType:   "%[4]s %[1]s は %[2]s %[3]s のはずですが、%[5]sの %[6]s でした",
	AssertCompare:       "%[4]s %[1]s は %[2]s %[3]s のはずですが、%[5]s でした",
	AssertSubsetObject:  "subsetOf にはオブジェクトが必要ですが、%s でした",
	AssertSubsetType:    "%[3]s %[1]s は %[2]s に含まれるオブジェクトのはずですが、%[4]sの %[5]s でした",
	AssertSubset:        "%[3]s %[1]s の項目はすべて %[2]s にあるはずですが、%[4]s: %[5]s がありません",
	AssertStoredAs:      "%[3]s %[1]s は保存されると %[2]s になるはずですが、%[4]s でした (%[5]s が違います)",

	GitExpectRepo:      "%s に git リポジトリがあるはずですが、ありません",
	GitExpectNoRepo:    "%s に git リポジトリは無いはずですが、あります",
	GitNoRepoAt:        "%s に git リポジトリがありません",
	GitCommits:         "%[2]s の HEAD から辿れるコミットの数は %[1]s のはずですが、%[3]d でした",
	GitCommitsSince:    "%[2]s でステップの開始 (%[3]s) 以降の新しいコミットは %[1]s のはずですが、%[4]d でした",
	GitStepNotBegun:    "このステップはまだ始まっていないので、%s に新しいコミットはありません。コミットは、このステップが現在のステップになったときから数えます",
	AuditApplyAgain:    " (変更がないとき %[1]s は何も送りません。%[2]s は必ず送ります)",
	AuditBeforeStart:   "これがこのステップで行われたのか判断できません。API サーバーの記録では、ステップの開始を確認した %[1]s より前にしか見つからないからです (前のステップをチェックしたのがその後でした)。これはあなたの減点にはなりません。いまもう一度行い%[2]s、もう一度チェックしてください",
	GitStepStartLate:   "%[1]s のどのコミットがこのステップのものか判断できません。ステップの開始を確認できず、リポジトリを記録したのは後の %[2]s の時点だからです。これはあなたの減点にはなりません。このステップのコミットを %[2]s の上にいま作り、もう一度チェックしてください",
	GitStepHeadGone:    "ステップの開始時に %[2]s はコミット %[1]s にありましたが、そのコミットが HEAD の履歴にありません。履歴が書き換えられています (コミットの修正、リベース、リセット)。%[1]s を残し、その上に新しいコミットを作ってください",
	GitTracked:         "%[2]s の HEAD で %[1]s が追跡されているはずですが、されていません",
	GitNoCommits:       "%s のリポジトリにはコミットがありません",
	GitRevNotFound:     "%[2]s にリビジョン %[1]s がありません",
	GitFileNotFoundAt:  "%[2]s に %[1]s がありません",
	GitFileTooLarge:    "%[2]s の %[1]s は %[3]d MiB より大きく、チェックが読める大きさを超えています",
	GitConfigUnset:     "%[2]s/.git/config に %[1]s が設定されているはずですが、未設定か空です",
	GitHistoryTooLong:  "履歴のコミットが %d 個を超えていて、チェックが辿れる数を超えています",
	GitHistoryOfTooBig: "%s の履歴のコミットが %d 個を超えていて、チェックが辿れる数を超えています",
	GitBare:            "%s はベアリポジトリです。作業ツリーのあるリポジトリにしてください",
	GitNotClean:        "%s の作業ツリーに変更は無いはずですが、%d 件の変更があります: %s",
	GitNotDirty:        "%s にコミットしていない変更があるはずですが、作業ツリーに変更はありません",
	GitdirFile:         "%s は別の場所のリポジトリを指すファイル (gitdir:) です。リポジトリ自身の .git ディレクトリにしてください",
	GitDirNotDir:       "%s は%sです。リポジトリ自身の .git ディレクトリにしてください",
	GitBorrows:         "%s には %s があり、別のリポジトリのファイルを借りています。ラボのリポジトリには、ファイルそのものを置いてください",
	GitObjectMissing:   "%s には履歴に必要なオブジェクトがありません。足りないものは `git fsck` で確認できます",
	GitHeadNotRegular:  "%s/HEAD は通常のファイルではなく、%sです",
	GitSymlink:         "%s はシンボリックリンク (行き先: %s) です。リポジトリ自身のファイルだけを読みます",
	GitOtherDir:        "%s は別のディレクトリ (%s) を参照しています。ラボのリポジトリには、ファイルそのものを置いてください",
	GitObjectTooLarge:  "%[3]s の %[1]s オブジェクト %[2]s は %[4]s より大きく、チェックが読める大きさを超えています",
	GitRepoTooLarge:    "%s は作業ツリーを含めて %s を超えていて、/root の外のリポジトリとしてチェックが読める大きさを超えています。大きなファイルを置かないでください",
	ScopeIn:            "%s の",
	ScopeTouching:      "%[2]s で %[1]s を変更した",
	WhichLast:          "最新の",
	WhichFirst:         "最初の",
	MsgNoCommits:       "%sコミットがあるはずですが、ありません",
	MsgOne:             "%[2]s%[1]sコミット (%[3]s) のメッセージは%[4]s",
	MsgAll:             "%[1]sすべてのコミットのメッセージは%[2]s (%[3]s)",
	MsgAny:             "%[1]sコミットのどれかのメッセージが%[2]sはずですが、%[3]d 個のどれも違います。最新のもの:%[4]s",
	ProblemShort:       " %d 文字以上のはずですが、%d 文字でした: %s",
	ProblemMatch:       " %q に一致するはずですが、%s でした",
	DescMatch:          " %q に一致する",
	DescMinLength:      " %d 文字以上である",
	DescExist:          "存在する",
	DescAnd:            "%s、かつ%s",

	KubeExpectExist:    "クラスターに %s があるはずですが、ありません",
	KubeExpectAbsent:   "%s は無いはずですが、クラスターにあります",
	KubeLabelMissing:   "%[3]s にラベル %[1]s=%[2]s があるはずですが、そのラベルはありません",
	KubeLabelWrong:     "%[3]s のラベルは %[1]s=%[2]s のはずですが、%[4]s=%[5]v でした",
	KubeCount:          "%[1]s は %[2]s のはずですが、%[3]d 個でした%[4]s",
	KubeFileNotLive:    "%[1]s にある %[2]s がクラスターにありません。ファイルがクラスターの状態と一致していません。ファイルを適用するか、ファイルからそのオブジェクトを外してください",
	KubeFileNotInFile:  "%[1]s はクラスターにありますが、%[2]s にはありません。ファイルがクラスターの状態と一致していません。ファイルに書いて適用するか、クラスターから削除してください",
	KubeFileDiffers:    "クラスターの %[1]s が %[2]s の内容と違います。%[3]s がクラスターでは %[4]s、ファイルでは %[5]s です。ファイルを直して適用し、ファイルとクラスターを一致させてください",
	KubeFileAbsent:     "なし",
	KubeEvery:          "%s のすべて",
	KubeEveryIn:        "%[2]s の %[1]s のすべて",
	KubeMatching:       "%[1]s のうち %[2]q に合うもの",
	KubeMatchingIn:     "%[2]s の %[1]s のうち %[3]q に合うもの",
	AccessExpectYes:    "%s は許可されるはずですが、API サーバーは許可しませんでした",
	AccessExpectNo:     "%s は許可されないはずですが、API サーバーは許可しました",
	PermissionsFailed:  "ラボの名前空間での権限が、ラボの定める権限と一致しません: %s%s",
	PermissionsExtra:   "%[1]s は %[4]s の %[3]s を %[2]s できますが、ラボはこの権限を認めていません(%[5]s)",
	PermissionsMissing: "%[1]s は %[4]s の %[3]s を %[2]s できませんが、ラボはこの権限を求めています",
	PermissionsMore:    "、ほか %d 件",
	ReachExpectOpen:    "%s から %s に接続できるはずですが、できませんでした: %s",
	ReachExpectClosed:  "%s から %s には接続できないはずですが、接続できました",
	ReachFrom:          "%s に新しく作った Pod",
	ReachFromLabelled:  "%s に新しく作った、ラベル %s の Pod",
	MatrixWrong:        "%[2]d 本の経路のうち %[1]d 本が期待どおりではありません: %[3]s",
	MatrixCell:         "%s (%s) から %s (%s): 期待 %s、結果 %s",
	MatrixOpen:         "接続できる",
	MatrixClosed:       "接続できない",
	MatrixWhy:          "接続できない: %s",
	MatrixFrom:         "%s のラベルのない Pod",
	MatrixFromLabels:   "%s のラベル %s の Pod",
	RefFailed:          "参照 %s: %s",
	RefObjectNotFound:  "クラスターに %s がありません",
	RefFieldNotFound:   "%[2]s に %[1]s がありません",

	CommandNoDir:  "%[2]s を実行するディレクトリ %[1]s がありません",
	CommandExit:   "%[2]s の終了コードは %[1]d のはずですが、%[3]d でした%[4]s",
	CommandStdout: "%s の出力は %q に一致するはずですが、%s でした",

	ServiceRuns:       "%[2]s で %[1]s が動いています: %[3]s",
	ServiceNotRunning: "%[2]s で %[1]s が動いているはずですが、その cgroup にノードのプロセスがありません",
	ServiceRunning:    "%[2]s で %[1]s は止まっているはずですが、その cgroup に %[3]s があります",

	NotRun:       "実行されませんでした: %v",
	TimedOut:     "%s で時間切れになりました",
	CallTimedOut: "要求に時間内の応答がありませんでした: %v",
	NotFinished:  "終わりませんでした: %v",
}
