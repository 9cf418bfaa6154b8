package provision

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// learnerKubeconfig renders the kubeconfig written into the sandbox: the
// learner's token against the API server's address inside the kind network.
func learnerKubeconfig(labName, server string, caData []byte, token, namespace string) ([]byte, error) {
	return kubeconfig(labName, server, caData, LearnerAccount, token, namespace)
}

// kubeconfig renders a kubeconfig of user's token against server, in
// namespace.
func kubeconfig(labName, server string, caData []byte, user, token, namespace string) ([]byte, error) {
	name := ClusterName(labName)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user, Namespace: namespace}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("rendering the %s kubeconfig: %w", user, err)
	}
	return b, nil
}

// ClusterName is the name of a lab's cluster: kind's cluster, and the
// cluster and context of the kubeconfigs labctl writes.
func ClusterName(lab string) string { return "labctl-" + lab }
