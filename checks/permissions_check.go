package checks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// AccessQuestion is what one SubjectAccessReview asks: may User, a member
// of Groups, do Verb on the resource (Name "" asks about a request that
// names no object)? User is empty when only a group is asked about.
type AccessQuestion struct {
	User        string
	Groups      []string
	Verb        string
	Group       string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
}

// AccessAnswer is the API server's answer: Reason is its authorizer's
// account, which for RBAC names the binding and the role that allow it.
type AccessAnswer struct {
	Allowed bool
	Reason  string
}

// AccessAsker asks the API server an AccessQuestion.
type AccessAsker interface {
	Ask(ctx context.Context, q AccessQuestion) (AccessAnswer, error)
}

// permissionsParallel bounds the reviews a permissions check has in
// flight at once.
const permissionsParallel = 16

// maxPermissionQuestions bounds the reviews of one permissions check.
const maxPermissionQuestions = 20000

// maxFindingsShown bounds the findings a failure names; it counts the rest.
const maxFindingsShown = 6

// labctlNamespace holds labctl's own accounts (the learner's, the
// grader's, the probe's): bindings to them are labctl's, not the lab's.
const labctlNamespace = "labctl-system"

// checkPermissions judges, as a whole, what the subjects of p and every
// subject bound in p's namespaces may do there (see lab.PermissionsCheck).
//
// pass: every answer is what p states. fail: a subject may do something
// no must or may entry covers, or may not do what a must entry requires.
// error: no credentials, the cluster unreachable or refusing a question.
func checkPermissions(ctx context.Context, env Env, p *lab.PermissionsCheck) error {
	asker, okAsk := env.Kube.(AccessAsker)
	lister, okList := env.Kube.(ObjectLister)
	if env.Kube == nil || !okAsk || !okList {
		return errNoCluster
	}
	findings, err := judgePermissions(ctx, asker, lister, p)
	if err != nil {
		return err
	}
	if len(findings) == 0 {
		return nil
	}
	shown := findings[:min(len(findings), maxFindingsShown)]
	texts := make([]msg.Text, len(shown))
	for i, f := range shown {
		texts[i] = f.text()
	}
	if n := len(findings) - len(shown); n > 0 {
		return failf(msg.PermissionsFailed, texts, msg.T(msg.PermissionsMore, n))
	}
	return failf(msg.PermissionsFailed, texts, "")
}

// identity is a subject as the API server sees its requests.
type identity struct {
	// Name is the subject as the lab or a binding writes it: ci/deployer,
	// user alice, group shop-oncall.
	Name   string
	User   string
	Groups []string
	// stated is the lab's statement of its rights; nil for a bound subject
	// the lab does not state, which may do nothing.
	stated *lab.PermissionSubject
}

func serviceAccountIdentity(ns, name string) identity {
	return identity{Name: ns + "/" + name, User: "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
}

func subjectIdentity(s *lab.PermissionSubject) identity {
	var id identity
	switch {
	case s.ServiceAccount != "":
		ns, name, _ := strings.Cut(s.ServiceAccount, "/")
		id = serviceAccountIdentity(ns, name)
	case s.User != "":
		id = identity{Name: "user " + s.User, User: s.User, Groups: append(slices.Clone(s.Groups), "system:authenticated")}
		if len(s.Groups) > 0 {
			id.Name += " (" + strings.Join(s.Groups, ", ") + ")"
		}
	default:
		id = identity{Name: "group " + s.Group, Groups: []string{s.Group, "system:authenticated"}}
	}
	id.stated = s
	return id
}

// key tells identities apart.
func (id identity) key() string { return id.User + "\x00" + strings.Join(id.Groups, ",") }

// member reports whether a binding's subject takes in id.
func (id identity) member(s map[string]any) bool {
	kind, name, ns := str(s["kind"]), str(s["name"]), str(s["namespace"])
	switch kind {
	case "ServiceAccount":
		return id.User == "system:serviceaccount:"+ns+":"+name
	case "User":
		return id.User != "" && id.User == name
	case "Group":
		return slices.Contains(id.Groups, name)
	}
	return false
}

// boundIdentity is the identity a binding's subject names; ok is false for
// labctl's own accounts and for what is not a subject.
func boundIdentity(s map[string]any) (identity, bool) {
	kind, name, ns := str(s["kind"]), str(s["name"]), str(s["namespace"])
	if name == "" {
		return identity{}, false
	}
	switch kind {
	case "ServiceAccount":
		if ns == "" || ns == labctlNamespace {
			return identity{}, false
		}
		return serviceAccountIdentity(ns, name), true
	case "User":
		return identity{Name: "user " + name, User: name, Groups: []string{"system:authenticated"}}, true
	case "Group":
		return identity{Name: "group " + name, Groups: []string{name, "system:authenticated"}}, true
	}
	return identity{}, false
}

func str(v any) string { s, _ := v.(string); return s }

// point is one question of the universe, for one identity.
type point struct {
	id        int
	verb      string
	res       lab.Resource
	namespace string
	name      string
}

// finding is one answer that is not what the lab states.
type finding struct {
	subject string
	point   point
	// extra: the subject may and should not; else it may not and should.
	extra  bool
	reason string
}

func (f finding) text() msg.Text {
	what := f.point.res.String()
	if f.point.name != "" {
		what += " " + f.point.name
	}
	if f.extra {
		return msg.T(msg.PermissionsExtra, f.subject, f.point.verb, what, f.point.namespace, msg.Detail(f.reason))
	}
	return msg.T(msg.PermissionsMissing, f.subject, f.point.verb, what, f.point.namespace)
}

// rbacObjects are the bindings and roles a permissions check reads.
type rbacObjects struct {
	bindings        []map[string]any // RoleBindings of the check's namespaces
	clusterBindings []map[string]any
	roles           map[string]map[string]any // namespace/name
	clusterRoles    map[string]map[string]any
}

func readRBAC(ctx context.Context, lister ObjectLister, namespaces []string) (*rbacObjects, error) {
	o := &rbacObjects{roles: map[string]map[string]any{}, clusterRoles: map[string]map[string]any{}}
	for _, ns := range namespaces {
		bs, err := lister.List(ctx, lab.RBACAPIVersion, "RoleBinding", ns, "")
		if err != nil {
			return nil, err
		}
		o.bindings = append(o.bindings, bs...)
		rs, err := lister.List(ctx, lab.RBACAPIVersion, "Role", ns, "")
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			o.roles[ns+"/"+objectName(r)] = r
		}
	}
	var err error
	if o.clusterBindings, err = lister.List(ctx, lab.RBACAPIVersion, "ClusterRoleBinding", "", ""); err != nil {
		return nil, err
	}
	crs, err := lister.List(ctx, lab.RBACAPIVersion, "ClusterRole", "", "")
	if err != nil {
		return nil, err
	}
	for _, r := range crs {
		o.clusterRoles[objectName(r)] = r
	}
	return o, nil
}

func objectName(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	return str(md["name"])
}

func objectNamespace(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	return str(md["namespace"])
}

func subjectsOf(binding map[string]any) []map[string]any {
	list, _ := binding["subjects"].([]any)
	var out []map[string]any
	for _, s := range list {
		if m, ok := s.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// roleOf is the role a binding refers to, nil when there is none.
func (o *rbacObjects) roleOf(binding map[string]any) map[string]any {
	ref, _ := binding["roleRef"].(map[string]any)
	if str(ref["kind"]) == "Role" {
		return o.roles[objectNamespace(binding)+"/"+str(ref["name"])]
	}
	return o.clusterRoles[str(ref["name"])]
}

// identities are the check's subjects: those p states, then every subject
// a RoleBinding in p's namespaces binds, then the service accounts of p's
// namespaces and their namespace's group that a ClusterRoleBinding binds.
func identities(p *lab.PermissionsCheck, o *rbacObjects) []identity {
	var out []identity
	seen := map[string]bool{}
	add := func(id identity) {
		if !seen[id.key()] {
			seen[id.key()] = true
			out = append(out, id)
		}
	}
	for i := range p.Subjects {
		add(subjectIdentity(&p.Subjects[i]))
	}
	for _, b := range o.bindings {
		for _, s := range subjectsOf(b) {
			if id, ok := boundIdentity(s); ok {
				add(id)
			}
		}
	}
	for _, b := range o.clusterBindings {
		for _, s := range subjectsOf(b) {
			kind, name, ns := str(s["kind"]), str(s["name"]), str(s["namespace"])
			inLab := (kind == "ServiceAccount" && slices.Contains(p.Namespaces, ns)) ||
				(kind == "Group" && slices.ContainsFunc(p.Namespaces, func(n string) bool { return name == "system:serviceaccounts:"+n }))
			if id, ok := boundIdentity(s); ok && inLab {
				add(id)
			}
		}
	}
	return out
}

// namesAsked returns, by resource, the object names a question names
// beside none: every name a rule of a role bound to one of ids (in p's
// namespaces, or cluster-wide) limits itself to, and every name p states.
// A request naming any other object is decided as one naming none.
func namesAsked(p *lab.PermissionsCheck, o *rbacObjects, ids []identity, universe []lab.Resource) map[lab.Resource][]string {
	out := map[lab.Resource][]string{}
	add := func(r lab.Resource, name string) {
		if name != "" && !slices.Contains(out[r], name) {
			out[r] = append(out[r], name)
		}
	}
	fromRole := func(role map[string]any) {
		rules, _ := role["rules"].([]any)
		for _, x := range rules {
			rule, _ := x.(map[string]any)
			names := strings_(rule["resourceNames"])
			if len(names) == 0 {
				continue
			}
			for _, r := range universe {
				if ruleCovers(rule, r) {
					for _, n := range names {
						add(r, n)
					}
				}
			}
		}
	}
	for _, b := range o.bindings {
		if role := o.roleOf(b); role != nil {
			fromRole(role)
		}
	}
	for _, b := range o.clusterBindings {
		bound := slices.ContainsFunc(subjectsOf(b), func(s map[string]any) bool {
			return slices.ContainsFunc(ids, func(id identity) bool { return id.member(s) })
		})
		if role := o.roleOf(b); bound && role != nil {
			fromRole(role)
		}
	}
	for _, s := range p.Subjects {
		for _, perm := range slices.Concat(s.Must, s.May) {
			for _, rs := range perm.Resources {
				r, err := lab.ParseResource(rs)
				if err != nil {
					continue
				}
				for _, n := range perm.Names {
					add(r, n)
				}
			}
		}
	}
	for r := range out {
		slices.Sort(out[r])
	}
	return out
}

func strings_(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// ruleCovers reports whether an RBAC rule's groups and resources take in r.
func ruleCovers(rule map[string]any, r lab.Resource) bool {
	groups, resources := strings_(rule["apiGroups"]), strings_(rule["resources"])
	if !slices.Contains(groups, "*") && !slices.Contains(groups, r.Group) {
		return false
	}
	full := r.Resource
	if r.Subresource != "" {
		full += "/" + r.Subresource
	}
	return slices.Contains(resources, "*") || slices.Contains(resources, full) ||
		(r.Subresource != "" && slices.Contains(resources, "*/"+r.Subresource))
}

// covers reports whether perm takes in the question pt (with check
// namespaces ns as its default).
func covers(perm lab.Permission, pt point, ns []string) bool {
	if !slices.Contains(perm.Verbs, pt.verb) {
		return false
	}
	if !slices.ContainsFunc(perm.Resources, func(s string) bool { r, err := lab.ParseResource(s); return err == nil && r == pt.res }) {
		return false
	}
	if len(perm.Namespaces) > 0 {
		ns = perm.Namespaces
	}
	if !slices.Contains(ns, pt.namespace) {
		return false
	}
	return len(perm.Names) == 0 || slices.Contains(perm.Names, pt.name)
}

// unnamedVerbs never name an object: the API server authorizes a create
// or a deletecollection with no name, so a rule limited by resourceNames
// never allows one.
var unnamedVerbs = map[string]bool{"create": true, "deletecollection": true}

// judgePermissions asks every question of p's universe for every
// identity and returns the answers that are not what p states, sorted by
// identity, namespace, resource, verb and name. A named object's answer is
// left out where the same question naming none already says it.
func judgePermissions(ctx context.Context, asker AccessAsker, lister ObjectLister, p *lab.PermissionsCheck) ([]finding, error) {
	o, err := readRBAC(ctx, lister, p.Namespaces)
	if err != nil {
		return nil, err
	}
	ids := identities(p, o)
	universe, verbs := p.Universe(), p.AllVerbs()
	names := namesAsked(p, o, ids, universe)
	var points []point
	for i := range ids {
		for _, ns := range p.Namespaces {
			for _, r := range universe {
				for _, verb := range verbs {
					for _, name := range append([]string{""}, names[r]...) {
						if name != "" && unnamedVerbs[verb] {
							continue
						}
						points = append(points, point{id: i, verb: verb, res: r, namespace: ns, name: name})
					}
				}
			}
		}
	}
	if len(points) > maxPermissionQuestions {
		return nil, fmt.Errorf("the check would ask the API server %d questions, more than %d; name fewer namespaces, resources or verbs", len(points), maxPermissionQuestions)
	}
	answers, err := askAll(ctx, asker, ids, points)
	if err != nil {
		return nil, err
	}
	// reported holds the questions naming no object already found, a
	// finding that covers the same question naming any object.
	type qkey struct {
		id       int
		verb, ns string
		res      lab.Resource
		extra    bool
	}
	reported := map[qkey]bool{}
	var out []finding
	for i, pt := range points {
		id, a := ids[pt.id], answers[i]
		var must, may bool
		if s := id.stated; s != nil {
			must = slices.ContainsFunc(s.Must, func(perm lab.Permission) bool { return covers(perm, pt, p.Namespaces) })
			may = must || slices.ContainsFunc(s.May, func(perm lab.Permission) bool { return covers(perm, pt, p.Namespaces) })
		}
		var f finding
		switch {
		case a.Allowed && !may:
			f = finding{subject: id.Name, point: pt, extra: true, reason: strings.TrimPrefix(a.Reason, "RBAC: ")}
		case !a.Allowed && must:
			f = finding{subject: id.Name, point: pt}
		default:
			continue
		}
		k := qkey{pt.id, pt.verb, pt.namespace, pt.res, f.extra}
		if pt.name == "" {
			reported[k] = true
		} else if reported[k] {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// askAll asks the questions of points, at most permissionsParallel at a
// time, and returns the answers in the same order; the first error stops
// the rest.
func askAll(ctx context.Context, asker AccessAsker, ids []identity, points []point) ([]AccessAnswer, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := make([]AccessAnswer, len(points))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for range min(permissionsParallel, len(points)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				pt, id := points[i], ids[points[i].id]
				a, err := asker.Ask(ctx, AccessQuestion{User: id.User, Groups: id.Groups, Verb: pt.verb, Group: pt.res.Group,
					Resource: pt.res.Resource, Subresource: pt.res.Subresource, Namespace: pt.namespace, Name: pt.name})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					continue
				}
				answers[i] = a
			}
		}()
	}
feed:
	for i := range points {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return answers, ctx.Err()
}
