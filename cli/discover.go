package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/capsfile"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// discoverTimeout bounds the whole read of the cluster: four lists.
const discoverTimeout = time.Minute

func newCapabilitiesDiscoverCommand(s streams) *cobra.Command {
	var kubeconfig, kubeContext, mergeFile, name, nodeSelector string
	cmd := &cobra.Command{
		Use:   "discover [--kubeconfig FILE] [--context NAME] [--merge FILE | --node-selector LABELS] [--name NAME]",
		Short: "Write the capability file of a live cluster",
		Long: `Read a cluster and print its capability file: node pools grouped by the
cloud's node-pool label (AKS, EKS, GKE, Karpenter; nodes without one by their
GPUs), with GPU Feature Discovery's product, memory and count, the allocatable
GPU resource, taints, the least cpu and memory a node allocates and the node
count; the providers whose CRDs are installed, with the operator release its
Deployment shows; the Gateway API bundle and channel, the InferencePool API,
and a Gateway to attach routes to. Every guess is a comment above its field.

Read-only: it lists Nodes, Deployments, CustomResourceDefinitions and Gateways,
and nothing else (never a Secret). deploy/discover/clusterrole.yaml grants
exactly that. The same cluster gives the same bytes.

--merge FILE updates a hand-written capability file instead: its names,
selectors, prices, autoscaling ranges, images, selection rules and comments
stay, the facts (releases, installed providers, gateway versions, each pool's
taints, GPUs, capacity and node count) follow the cluster. Each change is
listed on stderr.

--node-selector LABELS (a label selector, as kubectl's -l) reads only the
Nodes it picks: for a cluster whose other nodes are not the renderer's, or
too many to describe. A file the renderer would refuse to read (larger than
1 MiB: thousands of node pools, from nodes of distinct node-pool labels,
GPUs or taints) is never printed.

The kubeconfig is found as kubectl finds it: --kubeconfig, else $KUBECONFIG,
else ~/.kube/config, else the in-cluster service account.`,
		Example: `  # the capability file of the current context's cluster
  airunway-render capabilities discover > clusters/prod/capabilities.yaml

  # update a hand-written file after an operator upgrade
  airunway-render capabilities discover --context prod --merge clusters/prod/capabilities.yaml > new.yaml
  mv new.yaml clusters/prod/capabilities.yaml && git diff`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkNodeSelector(nodeSelector, mergeFile); err != nil {
				return fail(err)
			}
			var text []byte
			var declared *hub.ClusterCapabilities
			if mergeFile != "" {
				var problems diag.List
				text, declared, problems = readMergeFile(hostFiles{stdin: s.in}, mergeFile)
				problems.Sorted().Report(s.errOut, "nothing was printed")
				if problems.HasErrors() {
					return exitCode(1)
				}
			}
			cfg, contextName, err := clientConfig(kubeconfig, kubeContext)
			if err != nil {
				return fail(err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), discoverTimeout)
			defer cancel()
			cluster, err := discover.ReadNodes(ctx, cfg, nodeSelector)
			if err != nil {
				return fail(fmt.Errorf("reading the cluster (context %q): %w", contextName, err))
			}
			if declared != nil {
				out, changes, err := capsfile.Merge(text, declared, cluster)
				if err != nil {
					return fail(fmt.Errorf("merging into %s: %w", mergeFile, err))
				}
				for _, c := range changes {
					fmt.Fprintf(s.errOut, "%s: %s\n", c.Field, c.Text)
				}
				if len(changes) == 0 {
					fmt.Fprintf(s.errOut, "%s matches the cluster\n", mergeFile)
				}
				_, err = s.out.Write(out)
				return err
			}
			if name == "" {
				name = dnsName(contextName)
			}
			caps, notes := discover.Discover(cluster, name)
			header := fmt.Sprintf("Discovered by `airunway-render capabilities discover` from context %q.\nRead the comments, name the pools, add prices; --merge keeps them when you discover again.", contextName)
			out, err := capsfile.Encode(caps, notes, header)
			if err != nil {
				hint := ""
				if errors.As(err, new(*capsfile.TooLargeError)) {
					hint = ", or read only the nodes the renderer places on (`--node-selector LABELS`)"
				}
				return fail(fmt.Errorf("%w%s", err, hint))
			}
			_, err = s.out.Write(out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&kubeContext, "context", "", "the kubeconfig context (default: its current context)")
	f.StringVar(&mergeFile, "merge", "", "a hand-written capability file to update (- reads stdin)")
	f.StringVar(&name, "name", "", "metadata.name of the file (default: the context's name)")
	f.StringVar(&nodeSelector, "node-selector", "", "read only the Nodes with these labels (a label selector, as kubectl's -l; not with --merge)")
	return cmd
}

// checkNodeSelector: a label selector, and not with --merge, which must
// see every node a declared pool selects (it drops a pool whose nodes it
// does not see).
func checkNodeSelector(selector, mergeFile string) error {
	if selector == "" {
		return nil
	}
	if mergeFile != "" {
		return errors.New("`--node-selector` must not be combined with `--merge`: a merge must see every node the file's pools select, and drops a pool whose nodes it does not see")
	}
	if _, err := labels.Parse(selector); err != nil {
		return fmt.Errorf("`--node-selector` is %q: %v; it must be a label selector such as \"pool=gpu,tier!=spot\"", selector, err)
	}
	return nil
}

// clientConfig loads the kubeconfig as kubectl does and returns the
// client configuration and the context's name ("in-cluster" without one).
func clientConfig(kubeconfig, kubeContext string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := loader.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("no kubeconfig: pass --kubeconfig, set $KUBECONFIG, or write ~/.kube/config")
		}
		return nil, "", fmt.Errorf("loading the kubeconfig: %w", err)
	}
	name := kubeContext
	if raw, err := loader.RawConfig(); err == nil && name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		name = "in-cluster"
	}
	cfg.UserAgent = "airunway-render-discover"
	// Four lists; no need for client-go's burst.
	cfg.QPS, cfg.Burst = 5, 10
	return cfg, name, nil
}

// dnsName turns a context name (often an ARN or user@cluster) into a
// metadata.name.
func dnsName(s string) string {
	s = strings.ToLower(s)
	if i := strings.LastIndexAny(s, "/@:"); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-.")
}

// readMergeFile reads and checks the capability file to merge into: it
// must be one the renderer accepts.
func readMergeFile(src files, file string) ([]byte, *hub.ClusterCapabilities, diag.List) {
	data, problems := readCapabilitiesText(src, file)
	if problems.HasErrors() {
		return nil, nil, problems
	}
	caps, problems := capabilities.Decode(data)
	ref := diag.Resource{Kind: hub.KindClusterCapabilities}
	if caps != nil {
		_, resolved := capabilities.Resolve(caps)
		problems = append(problems, resolved...)
		ref.APIVersion, ref.Name = caps.APIVersion, caps.Name
	}
	return data, caps, yamlerr.AddLinesIn(problems.Attach(ref, file), data)
}
