package cli

import (
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/render"
)

func newCapabilitiesCommand(s streams) *cobra.Command {
	caps := &cobra.Command{
		Use:   "capabilities",
		Short: "Commands about capability files",
		Example: `  # the Nodes a capability file describes, to try it on KWOK or kind
  airunway-render capabilities nodes -f clusters/prod/capabilities.yaml | kubectl apply -f -`,
		Args: cobra.NoArgs, // an argument is an unknown subcommand
		RunE: func(*cobra.Command, []string) error { return usagef("a subcommand is required") },
	}
	caps.AddCommand(newCapabilitiesNodesCommand(s), newCapabilitiesDiscoverCommand(s))
	return caps
}

func newCapabilitiesNodesCommand(s streams) *cobra.Command {
	var file, output string
	cmd := &cobra.Command{
		Use:   "nodes -f FILE [-o yaml|json]",
		Short: "Print the Nodes a capability file describes",
		Long: `Print, for every node pool of the capability file, its Nodes as Kubernetes
Node objects: nodes.count of them (default 2), named <pool>-<i>, labelled
with the pool's selector, the GPU Feature Discovery labels of NVIDIA GPUs
(nvidia.com/gpu.present, .count, .product, .memory) and
render.airunway.ai/node-pool, tainted as the pool says, with the pool's GPUs
(perNode, default 8), cpu and memory as capacity. Each is annotated
kwok.x-k8s.io/node: fake and addressed 127.0.0.1, for KWOK's fake kubelets.

A pool whose GPUs are DRA devices (gpu.deviceClassName) gets no GPU
capacity on its Nodes; after the Nodes come, for such pools, one
DeviceClass (resource.k8s.io/v1) per deviceClassName, selecting the devices
of the driver of that name, and one ResourceSlice per Node, named
<node>-<deviceClassName>, as the DRA driver would publish it: the driver
named like the DeviceClass (NVIDIA's are both gpu.nvidia.com), the node's
pool, and perNode devices gpu-0, gpu-1… with the pool's attributes, index,
uuid and capacity memory (memoryMiB).

This is how the cluster twin builds its nodes; apply them to a KWOK (or kind)
cluster to see where rendered models would be scheduled.`,
		Example: `  airunway-render capabilities nodes -f examples/kustomize/clusters/prod/capabilities.yaml
  airunway-render capabilities nodes -f caps.yaml -o json | jq '.items[].metadata.name'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usagef("`-f FILE` must name the capability file")
			}
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			caps, problems := readCapabilities(hostFiles{stdin: s.in}, file)
			problems.Sorted().Report(s.errOut, "no Node was printed")
			if problems.HasErrors() {
				return exitCode(1)
			}
			var objs []runtime.Object
			for _, n := range caps.Nodes() {
				objs = append(objs, &n)
			}
			for _, c := range caps.DeviceClasses() {
				objs = append(objs, &c)
			}
			for _, rs := range caps.ResourceSlices() {
				objs = append(objs, &rs)
			}
			items, err := simulatedObjects(objs)
			if err != nil {
				return fail(err)
			}
			if output == "json" {
				return writeJSONList(s.out, items)
			}
			return writeStream(s.out, items)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "filename", "f", "", "the ClusterCapabilities file (- reads stdin)")
	f.StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// simulatedObjects encodes Nodes, DeviceClasses and ResourceSlices as YAML
// documents, without the empty fields the typed objects would print
// (creationTimestamp, a Node's kubelet endpoint and system info).
func simulatedObjects(objs []runtime.Object) ([]render.Encoded, error) {
	var out []render.Encoded
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
		if _, node := o.(*corev1.Node); node {
			unstructured.RemoveNestedField(m, "status", "daemonEndpoints")
			unstructured.RemoveNestedField(m, "status", "nodeInfo")
		}
		y, err := sigsyaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		out = append(out, render.Encoded{YAML: y})
	}
	return out, nil
}
