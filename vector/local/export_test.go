package local

// Exported for the external tests.
var CheckpointDue = checkpointDue

const (
	CheckpointFloor = checkpointFloor
	CheckpointRatio = checkpointRatio
)
