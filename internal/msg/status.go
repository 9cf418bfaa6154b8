package msg

// The keys of the status lines of `labctl up`, `reset`, `down` and
// `doctor`: one line per stage, in the learner's language.
const (
	StatusCheckingMachine  Key = "status.checkingMachine"
	StatusEnsuringImages   Key = "status.ensuringImages"
	StatusSettingUpCluster Key = "status.settingUpCluster"
	StatusPreparingSandbox Key = "status.preparingSandbox"
	StatusRepairingSandbox Key = "status.repairingSandbox"
	StatusRunningSetup     Key = "status.runningSetup"
	StatusReady            Key = "status.ready"
	StatusRollingBack      Key = "status.rollingBack"
	StatusCouldNotRemove   Key = "status.couldNotRemove"
	StatusCheckingCluster  Key = "status.checkingCluster"
	StatusReusingCluster   Key = "status.reusingCluster"
	StatusRepairingCluster Key = "status.repairingCluster"
	StatusCreatingCluster  Key = "status.creatingCluster"
	StatusFix              Key = "status.fix"

	StatusSavingHome        Key = "status.savingHome"
	StatusRecreatingSandbox Key = "status.recreatingSandbox"
	StatusRemovingCluster   Key = "status.removingCluster"
	StatusRunningSetupOf    Key = "status.runningSetupOf"
	StatusRunningSolveOf    Key = "status.runningSolveOf"

	StatusRemovingKeepHome Key = "status.removingKeepHome"
	StatusRemovingWithHome Key = "status.removingWithHome"

	StatusStopping       Key = "status.stopping"
	StatusStarting       Key = "status.starting"
	StatusWaitingCluster Key = "status.waitingCluster"
	StatusRenewingAccess Key = "status.renewingAccess"

	StatusLoadingImages        Key = "status.loadingImages"
	StatusOptionalImageMissing Key = "status.optionalImageMissing"
	StatusStartingAddons       Key = "status.startingAddons"

	DoctorProblems Key = "doctor.problems"
)

func init() {
	for k, v := range map[Key]string{
		StatusCheckingMachine:  "Checking the machine",
		StatusEnsuringImages:   "Ensuring images",
		StatusSettingUpCluster: "Setting up the cluster",
		StatusPreparingSandbox: "Preparing sandbox",
		StatusRepairingSandbox: "Repairing sandbox (it no longer runs commands)",
		StatusRunningSetup:     "Running step setup",
		StatusReady:            "Ready",
		StatusRollingBack:      "Removing what this run created",
		StatusCouldNotRemove:   "could not remove %s: %v",
		StatusCheckingCluster:  "Checking cluster",
		StatusReusingCluster:   "Reusing cluster",
		StatusRepairingCluster: "Repairing cluster (deleting and recreating it)",
		StatusCreatingCluster:  "Creating cluster",
		StatusFix:              "fix: %s",

		StatusSavingHome:        "Saving your /root",
		StatusRecreatingSandbox: "Recreating the sandbox and the lab's namespaces",
		StatusRemovingCluster:   "Removing the lab's cluster and sandbox",
		StatusRunningSetupOf:    "Running the setup script of step %s",
		StatusRunningSolveOf:    "Running the solve script of step %s",

		StatusRemovingKeepHome: "Removing lab %s (your /root is kept)",
		StatusRemovingWithHome: "Removing lab %s and your /root",

		StatusStopping:       "Stopping lab %s (its cluster, sandbox and /root are kept)",
		StatusStarting:       "Starting lab %s",
		StatusWaitingCluster: "Waiting for the API server, the nodes and the lab's namespaces",
		StatusRenewingAccess: "Checking the learner's and the grader's access",

		StatusLoadingImages:        "Loading images into the cluster: %s",
		StatusStartingAddons:       "Starting the cluster's add-ons: %s",
		StatusOptionalImageMissing: "image %[1]s is not in this machine's Docker engine: the Pods that run it will not start (%[2]s where a registry answers, then %[3]s)",

		DoctorProblems: "%d problem(s) found",
	} {
		englishKeyed[k] = v
	}
	for k, v := range map[Key]string{
		StatusCheckingMachine:  "マシンを確認しています",
		StatusEnsuringImages:   "イメージを用意しています",
		StatusSettingUpCluster: "クラスターを設定しています",
		StatusPreparingSandbox: "サンドボックスを準備しています",
		StatusRepairingSandbox: "サンドボックスを修復しています (コマンドを実行できなくなっていました)",
		StatusRunningSetup:     "ステップの準備スクリプトを実行しています",
		StatusReady:            "準備完了",
		StatusRollingBack:      "今回作ったものを削除しています",
		StatusCouldNotRemove:   "%s を削除できませんでした: %v",
		StatusCheckingCluster:  "クラスターを確認しています",
		StatusReusingCluster:   "既存のクラスターを使います",
		StatusRepairingCluster: "クラスターを修復しています (削除して作り直します)",
		StatusCreatingCluster:  "クラスターを作成しています",
		StatusFix:              "対処: %s",

		StatusSavingHome:        "/root を保存しています",
		StatusRecreatingSandbox: "サンドボックスとラボのネームスペースを作り直しています",
		StatusRemovingCluster:   "ラボのクラスターとサンドボックスを削除しています",
		StatusRunningSetupOf:    "ステップ %s の準備スクリプトを実行しています",
		StatusRunningSolveOf:    "ステップ %s の解答スクリプトを実行しています",

		StatusRemovingKeepHome: "ラボ %s を削除しています (/root は残します)",
		StatusRemovingWithHome: "ラボ %s と /root を削除しています",

		StatusStopping:       "ラボ %s を停止しています (クラスター、サンドボックス、/root は残します)",
		StatusStarting:       "ラボ %s を起動しています",
		StatusWaitingCluster: "API サーバー、ノード、ラボのネームスペースを待っています",
		StatusRenewingAccess: "学習者と採点者のアクセスを確認しています",

		StatusLoadingImages:        "イメージをクラスターに読み込んでいます: %s",
		StatusStartingAddons:       "クラスターのアドオンを起動しています: %s",
		StatusOptionalImageMissing: "イメージ %[1]s がこのマシンの Docker エンジンにありません。これを使うコンテナは起動しません (レジストリにつながる環境で %[2]s をしてから %[3]s)",

		DoctorProblems: "%d 件の問題が見つかりました",
	} {
		japaneseKeyed[k] = v
	}
}

// Say puts key with args into words in c's language; a nil catalogue
// speaks English, so a caller that chose no language gets the English
// lines logs and tests read.
func (c *Catalog) Say(key Key, args ...any) string {
	if c == nil {
		c = New(English)
	}
	return c.Render(T(key, args...))
}
