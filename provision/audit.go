package provision

import (
	"fmt"
	"strings"

	"github.com/labctl/labctl/lab"
)

// The API server's audit log: the cluster labctl makes records what the
// learner's identity writes in the lab's namespaces, request bodies
// included, so that audit checks judge what the learner did rather than
// what they typed into files. Each runtime keeps the policy and the log in
// an audit directory of its own, which the grader reads and the sandbox
// never sees.
const (
	// AuditPolicyFile and AuditLogFile are the names of the policy and of
	// the log in the audit directory.
	AuditPolicyFile = "policy.yaml"
	AuditLogFile    = "audit.log"
	// AuditMaxSizeMB and AuditMaxBackups bound the log on the host: the
	// policy records only the learner's writes, far below this.
	AuditMaxSizeMB  = 20
	AuditMaxBackups = 2
)

// auditWriteVerbs are the verbs the policy records.
var auditWriteVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// AuditPolicy is the API server's audit policy for l: the learner's write
// requests in the lab's namespaces at level Request (metadata and body),
// nothing else, and no RequestReceived stage, so that each request is one
// line. With stepMarks (a class, whose learners may advance through an
// invite on their own machines) it also records the learner's
// SelfSubjectAccessReviews, by which their labctl marks each step's start
// (checks.MarkStep); a local lab's progress is on the host, and its log
// keeps no marks the learner could place.
func AuditPolicy(l *lab.Lab, stepMarks bool) []byte {
	learner := "system:serviceaccount:" + SystemNamespace + ":" + LearnerAccount
	var b strings.Builder
	b.WriteString("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n")
	if len(l.Cluster.Namespaces) > 0 {
		fmt.Fprintf(&b, "- level: Request\n  users: [%q]\n  verbs: [%s]\n  namespaces: [%s]\n",
			learner, strings.Join(auditWriteVerbs, ", "), quoteAll(l.Cluster.Namespaces))
	}
	if stepMarks {
		fmt.Fprintf(&b, "- level: Request\n  users: [%q]\n  verbs: [\"create\"]\n"+
			"  resources: [{group: \"authorization.k8s.io\", resources: [\"selfsubjectaccessreviews\"]}]\n", learner)
	}
	b.WriteString("- level: None\n")
	return []byte(b.String())
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
