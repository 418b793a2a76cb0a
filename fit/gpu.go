package fit

import (
	"fmt"
	"strings"

	"github.com/airunway-render/airunway-render/internal/wording"
)

// GPU is one GPU of a pool as the engine sees it.
type GPU struct {
	// Product is GPU Feature Discovery's nvidia.com/gpu.product
	// (NVIDIA-H100-80GB-HBM3), "" when the capability file names none.
	Product string
	// LabelMiB is the memory the node advertises (nvidia.com/gpu.memory,
	// the capability file's gpu.memoryMiB): what nvidia-smi reports.
	LabelMiB int64
	// TotalBytes is what torch.cuda.mem_get_info reports as the total:
	// the driver keeps part of the label for itself.
	TotalBytes int64
	// TotalFrom says where TotalBytes came from: a measured start-up log,
	// or an assumption from the label.
	TotalFrom string
	// Measured is true when TotalBytes is a figure an engine printed.
	Measured bool
	// PCIe is true for a product whose GPUs talk over PCIe only (no
	// NVLink): vLLM's custom all-reduce is off above two of them.
	PCIe bool
}

// deviceTotal is what torch reports as a product's total memory, in GiB
// as vLLM prints it ("total_memory=79.19GiB", "Free memory on device
// (x/79.19 GiB)"), with where it was read: a start-up log or torch's
// out-of-memory message on that product.
type deviceTotal struct {
	product string
	gib     float64
	source  string
	pcie    bool
}

// deviceTotals, by product as GPU Feature Discovery labels it (matched
// without regard to case). A product that is not here is assumed from its
// label.
var deviceTotals = []deviceTotal{
	{"NVIDIA-A100-SXM4-40GB", 39.39, "torch's out-of-memory message on a 40GB A100 of Perlmutter: \"GPU 2 has a total capacity of 39.39 GiB\" (https://github.com/NERSC/dl4sci25-dl-at-scale/blob/75e19e2cab8b567618bf072e24ea08cad474faff/README.md)", false},
	{"NVIDIA-A100-SXM4-80GB", 79.15, "a vLLM 0.8.2 start-up log (Phi-4) no longer found; the calibration table's A100 80GB logs at utilization 0.25 and 0.5 differ by 19.82 GiB of KV cache, a quarter of 79.3 GiB", false},
	{"NVIDIA-H100-80GB-HBM3", 79.19, "llm-d-planner accuracy logs, vLLM 0.19.0", false},
	{"NVIDIA-H100-PCIe", 79.19, "torch's out-of-memory message on an H100 PCIe: \"GPU 0 has a total capacity of 79.19 GiB\" (https://github.com/sms1097/FoundationTS/blob/a88bb1040b831ef719f55697b9140af94b8ffe4f/docs/proflie_training.md)", true},
	{"NVIDIA-L4", 22.03, "torch's out-of-memory message on an L4: \"GPU 0 has a total capacity of 22.03 GiB\" (https://github.com/ArcInstitute/evo2/issues/190)", true},
	{"NVIDIA-L40S", 44.42, "vLLM 0.10.2 start-up log on 8 L40S: \"Free memory on device (43.93/44.42 GiB)\" (https://github.com/tim-roethig/ai-platform/blob/8fc2c9bebee839944ff094745156629c0b40d637/platform/docs/qwen3_235b_on_8xl40s.md)", true},
}

func lookupDevice(product string) (deviceTotal, bool) {
	for _, d := range deviceTotals {
		if strings.EqualFold(d.product, product) {
			return d, true
		}
	}
	return deviceTotal{}, false
}

// DeviceTotal is one row of the GPU table, for docs.
type DeviceTotal struct {
	Product, Source string
	GiB             float64
	PCIe            bool
}

// DeviceTotals lists the GPU table, by product.
func DeviceTotals() []DeviceTotal {
	var out []DeviceTotal
	for _, t := range deviceTotals {
		out = append(out, DeviceTotal{Product: t.product, Source: t.source, GiB: t.gib, PCIe: t.pcie})
	}
	return out
}

// assumedReserveMiB is what the driver keeps of a GPU whose product the
// table lacks: between what it keeps of an H100 (468 MiB) and an A100
// 80GB (870 MiB), on the side of less memory for the engine.
const assumedReserveMiB = 700

// NewGPU is the GPU of a pool: product and label from the capability
// file, the total the engine sees from the table, or assumed from the
// label. The table's total holds only for a label of the whole product
// (no more than 2 GiB above the total): a smaller label is a slice of it
// (MIG) or a mistake, and the label is what the node offers. A label of
// 0 takes the table's total.
func NewGPU(product string, labelMiB int64) GPU {
	g := GPU{Product: product, LabelMiB: labelMiB}
	t, known := lookupDevice(product)
	if known && (labelMiB == 0 || float64(labelMiB) >= t.gib*1024 && float64(labelMiB) <= t.gib*1024+2048) {
		g.TotalBytes = int64(t.gib * gib)
		g.TotalFrom = fmt.Sprintf("%.2f GiB as torch reports a %s (%s)", t.gib, product, t.source)
		g.Measured, g.PCIe = true, t.pcie
		return g
	}
	g.TotalBytes = (labelMiB - assumedReserveMiB) * mib
	why := "no start-up log of this GPU is known"
	switch {
	case known:
		why = fmt.Sprintf("a whole %s shows %s MiB: a label of %s MiB is a slice of it (MIG) or not this product", product, wording.Thousands(int64(t.gib*1024)), wording.Thousands(labelMiB))
	case product != "":
		why = "no start-up log of " + product + " is known"
	}
	g.TotalFrom = fmt.Sprintf("assumed: %s MiB, the label less %d MiB the driver keeps (%s)", wording.Thousands(labelMiB-assumedReserveMiB), assumedReserveMiB, why)
	return g
}

const gib = 1 << 30
