package datasets

import (
	"fmt"
	"slices"
	"strings"
)

// Format is the on-disk layout of a dataset.
type Format int

const (
	// FormatIDX: train-images-idx3-ubyte, train-labels-idx1-ubyte,
	// t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each raw or .gz.
	FormatIDX Format = iota
	// FormatCIFAR10: data_batch_1.bin … data_batch_5.bin and test_batch.bin.
	FormatCIFAR10
)

// RemoteFile is one file of a dataset with the checksums we trust.
type RemoteFile struct {
	// Name is the file name as distributed (and as stored locally).
	Name string
	// SHA256 is the hex SHA-256 of the file as distributed; "" if unknown.
	SHA256 string
	// ContentSHA256 is the hex SHA-256 of the decompressed content of a .gz
	// file, which survives recompression (Debian recompresses its copy of
	// Fashion-MNIST, so its .gz files differ from upstream's); "" if unknown.
	ContentSHA256 string
	// Size is the size as distributed in bytes; 0 if unknown.
	Size int64
}

// Spec describes a dataset we know how to find, fetch and verify.
type Spec struct {
	Name    string
	Aliases []string
	Format  Format
	// Mirrors are base URLs tried in order; a file's URL is mirror + "/" + Name.
	Mirrors []string
	// Files are downloaded and kept as is.
	Files []RemoteFile
	// Archive, when set, is a .tar.gz downloaded, verified, unpacked into
	// Members (matched by base name) and then deleted.
	Archive *RemoteFile
	Members []RemoteFile
	// TrainN and TestN are the expected example counts of the full dataset.
	TrainN, TestN int
	Shape         []int
	ClassNames    []string
}

// The checksums below come from these sources:
//   - MNIST .gz SHA-256: the published sums used by torchvision-style
//     loaders and TFDS (many independent copies agree). MNIST's decompressed
//     sums are not known here: no copy of MNIST exists on this machine.
//   - Fashion-MNIST .gz SHA-256: the published upstream sums (TFDS, the
//     zalando repository's mirrors); ContentSHA256 was computed on this
//     machine from Debian's dataset-fashion-mnist files (zcat | sha256sum).
//     Debian's .gz files are recompressed (2020 gzip timestamps), so their
//     own SHA-256 differs from upstream's and is not listed.
//   - CIFAR-10: the published SHA-256 of cifar-10-binary.tar.gz (TFDS) and of
//     the six .bin members (torchvision's Ruby port); no copy exists here.
var catalog = []*Spec{
	{
		Name:   "mnist",
		Format: FormatIDX,
		Mirrors: []string{
			"https://ossci-datasets.s3.amazonaws.com/mnist",
			"https://storage.googleapis.com/cvdf-datasets/mnist",
			"http://yann.lecun.com/exdb/mnist",
		},
		Files: []RemoteFile{
			{Name: "train-images-idx3-ubyte.gz", Size: 9912422, SHA256: "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"},
			{Name: "train-labels-idx1-ubyte.gz", Size: 28881, SHA256: "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"},
			{Name: "t10k-images-idx3-ubyte.gz", Size: 1648877, SHA256: "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"},
			{Name: "t10k-labels-idx1-ubyte.gz", Size: 4542, SHA256: "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"},
		},
		TrainN: 60000, TestN: 10000, Shape: []int{1, 28, 28},
	},
	{
		Name:    "fashion-mnist",
		Aliases: []string{"fashion_mnist", "fashionmnist", "fmnist"},
		Format:  FormatIDX,
		Mirrors: []string{
			"https://fashion-mnist.s3.eu-central-1.amazonaws.com",
			"https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion",
		},
		Files: []RemoteFile{
			{Name: "train-images-idx3-ubyte.gz", Size: 26421880,
				SHA256:        "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
				ContentSHA256: "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888"},
			{Name: "train-labels-idx1-ubyte.gz", Size: 29515,
				SHA256:        "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
				ContentSHA256: "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9"},
			{Name: "t10k-images-idx3-ubyte.gz", Size: 4422102,
				SHA256:        "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
				ContentSHA256: "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b"},
			{Name: "t10k-labels-idx1-ubyte.gz", Size: 5148,
				SHA256:        "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
				ContentSHA256: "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34"},
		},
		TrainN: 60000, TestN: 10000, Shape: []int{1, 28, 28},
		ClassNames: FashionMNISTClasses,
	},
	{
		Name:    "cifar10",
		Aliases: []string{"cifar-10", "cifar"},
		Format:  FormatCIFAR10,
		Mirrors: []string{"https://www.cs.toronto.edu/~kriz"},
		Archive: &RemoteFile{Name: "cifar-10-binary.tar.gz", Size: 170052171,
			SHA256: "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd"},
		Members: []RemoteFile{
			{Name: "data_batch_1.bin", Size: 30730000, SHA256: "cee916563c9f80d84e3cc88e17fdc0941787f1244f00a67874d45b261883ada5"},
			{Name: "data_batch_2.bin", Size: 30730000, SHA256: "a591ca11fa1708a91ee40f54b3da4784ccd871ecf2137de63f51ada8b3fa57ed"},
			{Name: "data_batch_3.bin", Size: 30730000, SHA256: "bbe8596564c0f86427f876058170b84dac6670ddf06d79402899d93ceea26f67"},
			{Name: "data_batch_4.bin", Size: 30730000, SHA256: "014e562d6e23c72197cc727519169a60359f5eccd8945ad5a09d710285ff4e48"},
			{Name: "data_batch_5.bin", Size: 30730000, SHA256: "755304fc0b379caeae8c14f0dac912fbc7d6cd469eb67a1029a08a39453a9add"},
			{Name: "test_batch.bin", Size: 30730000, SHA256: "8e2eb146ae340b09e24670f29cabc6326dba54da8789dab6768acf480273f65b"},
		},
		TrainN: 50000, TestN: 10000, Shape: []int{3, 32, 32},
		ClassNames: CIFAR10Classes,
	},
}

// FashionMNISTClasses are the Fashion-MNIST class names by label.
var FashionMNISTClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// Names returns the canonical names of the known datasets.
func Names() []string {
	n := make([]string, len(catalog))
	for i, s := range catalog {
		n[i] = s.Name
	}
	return n
}

// Lookup returns the Spec of a known dataset by name or alias
// (case-insensitive).
func Lookup(name string) (*Spec, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, s := range catalog {
		if s.Name == n || slices.Contains(s.Aliases, n) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown dataset %q (known: %s)", name, strings.Join(Names(), ", "))
}

// localFiles lists the files a local copy holds: the kept files, or the
// archive's members.
func (s *Spec) localFiles() []RemoteFile {
	if s.Archive != nil {
		return s.Members
	}
	return s.Files
}

// idxNames are the four IDX files, train images/labels then test.
var idxNames = [4]string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}

// cifarTrain and cifarTest are the CIFAR-10 batch file names.
var (
	cifarTrain = []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}
	cifarTest  = []string{"test_batch.bin"}
)
