package msg

// The keys of `labctl doctor`'s findings (and of `labctl up`'s machine
// checks): names of software, files and settings are arguments or code
// names, the same in every language.
const (
	PreflightDockerDown        Key = "preflight.dockerDown"
	PreflightDockerFix         Key = "preflight.dockerFix"
	PreflightDockerUp          Key = "preflight.dockerUp"
	PreflightCapsUnreadable    Key = "preflight.capsUnreadable"
	PreflightCapsBroken        Key = "preflight.capsBroken"
	PreflightCapsBrokenFix     Key = "preflight.capsBrokenFix"
	PreflightCapsOK            Key = "preflight.capsOK"
	PreflightCapsFiltered      Key = "preflight.capsFiltered"
	PreflightCapsMissing       Key = "preflight.capsMissing"
	PreflightCapsFix           Key = "preflight.capsFix"
	PreflightCgroup            Key = "preflight.cgroup"
	PreflightCgroupV1          Key = "preflight.cgroupV1"
	PreflightNoCgroup          Key = "preflight.noCgroup"
	PreflightInotifyUnreadable Key = "preflight.inotifyUnreadable"
	PreflightInotify           Key = "preflight.inotify"
	PreflightInotifyLow        Key = "preflight.inotifyLow"
	PreflightInotifyFix        Key = "preflight.inotifyFix"
	PreflightDiskUnmeasurable  Key = "preflight.diskUnmeasurable"
	PreflightDisk              Key = "preflight.disk"
	PreflightDiskLow           Key = "preflight.diskLow"
	PreflightDiskFix           Key = "preflight.diskFix"
)

func init() {
	for k, v := range map[Key]string{
		PreflightDockerDown:        "the Docker engine does not answer: %v",
		PreflightDockerFix:         "install and start Docker (Debian: run %s as root), and make sure your user may use it (the docker group)",
		PreflightDockerUp:          "Docker engine %s answers (default runtime %s)",
		PreflightCapsUnreadable:    "capability bounding set not readable here (not Linux?): assuming privileged containers work",
		PreflightCapsBroken:        "the capability bounding set cannot be read: %v",
		PreflightCapsBrokenFix:     "check %s",
		PreflightCapsOK:            "capability bounding set includes %s: privileged containers work",
		PreflightCapsFiltered:      "capability bounding set lacks %s; Docker's default runtime %s filters capabilities",
		PreflightCapsMissing:       "capability bounding set lacks %s: privileged containers (kind nodes) will fail with %q",
		PreflightCapsFix:           "run %s or register a capability-filtering runtime as Docker's default runtime",
		PreflightCgroup:            "cgroup %s",
		PreflightCgroupV1:          "cgroup %s: supported (the kubelet is configured with %s); cgroup %s is preferred",
		PreflightNoCgroup:          "no %s here (not Linux?): the Docker engine's VM provides cgroups",
		PreflightInotifyUnreadable: "inotify limits not readable here (not Linux?)",
		PreflightInotify:           "%s=%d, %s=%d",
		PreflightInotifyLow:        "%s (below %d and %d: kubelet and pods may fail with %q)",
		PreflightInotifyFix:        "%s (persist in %s)",
		PreflightDiskUnmeasurable:  "free space under %s not measurable from here (%v)",
		PreflightDisk:              "%.1f GiB free under %s",
		PreflightDiskLow:           "%s (a lab needs %d GiB)",
		PreflightDiskFix:           "free disk space there (for example %s)",
	} {
		englishKeyed[k] = v
	}
	for k, v := range map[Key]string{
		PreflightDockerDown:        "Docker エンジンが応答しません: %v",
		PreflightDockerFix:         "Docker をインストールして起動し (Debian では root で %s を実行)、あなたのユーザーが使えるようにしてください (docker グループ)",
		PreflightDockerUp:          "Docker エンジン %s が応答しています (既定のランタイム %s)",
		PreflightCapsUnreadable:    "ここではケーパビリティのバウンディングセットを読めません (Linux 以外?)。特権コンテナは動くものとします",
		PreflightCapsBroken:        "ケーパビリティのバウンディングセットを読めません: %v",
		PreflightCapsBrokenFix:     "%s を確認してください",
		PreflightCapsOK:            "バウンディングセットに %s があります。特権コンテナは動きます",
		PreflightCapsFiltered:      "バウンディングセットに %s がありませんが、Docker の既定のランタイム %s がケーパビリティを調整します",
		PreflightCapsMissing:       "バウンディングセットに %s がありません。特権コンテナ (kind のノード) は %q で失敗します",
		PreflightCapsFix:           "%s を実行するか、ケーパビリティを調整するランタイムを Docker の既定のランタイムにしてください",
		PreflightCgroup:            "cgroup %s",
		PreflightCgroupV1:          "cgroup %s: 使えます (kubelet は %s で設定されています)。cgroup %s を勧めます",
		PreflightNoCgroup:          "ここには %s がありません (Linux 以外?)。Docker エンジンの仮想マシンが cgroup を用意します",
		PreflightInotifyUnreadable: "ここでは inotify の上限を読めません (Linux 以外?)",
		PreflightInotify:           "%s=%d、%s=%d",
		PreflightInotifyLow:        "%s (%d と %d を下回っています。kubelet とポッドが %q で失敗することがあります)",
		PreflightInotifyFix:        "%s (%s に書くと再起動後も残ります)",
		PreflightDiskUnmeasurable:  "ここからは %s の空き容量を測れません (%v)",
		PreflightDisk:              "空き容量 %.1f GiB (%s)",
		PreflightDiskLow:           "%s (ラボには %d GiB 必要です)",
		PreflightDiskFix:           "そこの空き容量を増やしてください (例: %s)",
	} {
		japaneseKeyed[k] = v
	}
}
