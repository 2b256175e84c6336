//go:build tools

// Package agentsandbox pins the agent-sandbox controller that internal/kube's
// end-to-end test runs beside kube-apiserver, so that a suspended Sandbox's
// pod is really deleted and a resumed one's created again. It is its own
// module (agent-sandbox v0.5.6 builds against k8s.io v0.36, kube-apiserver's
// module against v0.37); ../install.sh builds the controller from it.
package agentsandbox

import _ "sigs.k8s.io/agent-sandbox/controllers"
