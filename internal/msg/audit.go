package msg

// The keys of the audit checks' messages. A request is shown the way the
// learner would type it (apply deployments/web -n gitops-lab), the same in
// every language.
const (
	AuditMissing      Key = "audit.missing"
	AuditMissingAfter Key = "audit.missingAfter"
	AuditNoEarlier    Key = "audit.noEarlier"
	AuditBody         Key = "audit.body"
	AuditUnexpected   Key = "audit.unexpected"
	AuditInBody       Key = "audit.inBody"
	AuditStepStart    Key = "audit.stepStart"
	AuditLabStart     Key = "audit.labStart"
	AuditProbeStart   Key = "audit.probeStart"
	AuditNoProbe      Key = "audit.noProbe"
	// AuditBeforeCommit and AuditBeforePackedCommit take the request, the
	// commit, the file, the repository, when the commit was written and
	// when the last such request came.
	AuditBeforeCommit       Key = "audit.beforeCommit"
	AuditBeforePackedCommit Key = "audit.beforePackedCommit"
)

var auditEnglish = map[Key]string{
	AuditMissing:            "expected the cluster to have received %s %s, found no such request",
	AuditMissingAfter:       "expected %s after the last %s (at %s), found none after it",
	AuditNoEarlier:          "expected %s after %s, found no %s to come after",
	AuditBody:               "expected %s %s with its body as required, found %d such request(s) and none with it; the last: %s",
	AuditUnexpected:         "expected no %s %s, found one at %s",
	AuditInBody:             "in the request's body",
	AuditStepStart:          "since the step began (%s)",
	AuditLabStart:           "since the lab began",
	AuditProbeStart:         "while the step's probe ran (since %s)",
	AuditNoProbe:            "expected %s while the step's probe ran, but the probe did not run in this round; `lab check` in the shell, or `labctl check`, runs it",
	AuditBeforeCommit:       "expected %s after commit %s, the first to hold %s as HEAD holds it in %s, was made (at %s); the last such request came before it (at %s): commit first, then apply what the repository holds",
	AuditBeforePackedCommit: "expected %s after commit %s, the first to hold %s as HEAD holds it in %s, was made; its object is packed (git gc), and the pack was written at %s, after the last such request (at %s), so the order cannot be told: apply what the repository holds again",
}

var auditJapanese = map[Key]string{
	AuditMissing:            "%[2]s %[1]s のリクエストがクラスターに届いているはずですが、ありません",
	AuditMissingAfter:       "最後の %[2]s (%[3]s) のあとに %[1]s があるはずですが、ありません",
	AuditNoEarlier:          "%[2]s のあとに %[1]s があるはずですが、そもそも %[3]s がありません",
	AuditBody:               "%[2]s 本文が条件を満たす %[1]s があるはずですが、該当する %[3]d 件のどれも満たしません。最後のもの: %[4]s",
	AuditUnexpected:         "%[2]s %[1]s はないはずですが、%[3]s にありました",
	AuditInBody:             "リクエストの本文で",
	AuditStepStart:          "ステップの開始 (%s) 以降に",
	AuditLabStart:           "ラボの開始以降に",
	AuditProbeStart:         "テスト実行の間 (%s 以降) に",
	AuditNoProbe:            "テスト実行の間に %s があるはずですが、今回のチェックではテスト実行をしていません。テスト実行は、コマンドのたびの自動のチェックではなく、手動でチェックしたときだけ行います",
	AuditBeforeCommit:       "%[4]s の %[3]s をいまの HEAD の内容にした最初のコミット %[2]s ができた (%[5]s) あとに %[1]s があるはずですが、最後の %[1]s はその前 (%[6]s) でした。先にコミットし、それからリポジトリの内容を適用します",
	AuditBeforePackedCommit: "%[4]s の %[3]s をいまの HEAD の内容にした最初のコミット %[2]s のあとに %[1]s があるはずですが、コミットのオブジェクトがパックにまとめられ (git のガベージコレクション)、そのパックが書かれたのは最後の %[1]s (%[6]s) よりあと (%[5]s) なので、順序がわかりません。リポジトリの内容をもう一度適用してください",
}

func init() {
	for k, v := range auditEnglish {
		englishKeyed[k] = v
	}
	for k, v := range auditJapanese {
		japaneseKeyed[k] = v
	}
}
