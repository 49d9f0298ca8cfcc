// Host-side work inside a traced build(): while paused, the calling thread records nothing, so
// tensors made then are not the program's values; a recorded kernel that reads one captures it
// by reference (graph.cpp's Recorder::value_of), and writing new values into it before a replay
// feeds the replay (the data pipeline's batches, nn/modules/dataset.py).
#pragma once

namespace oneflow::graph {

// Stops recording on the calling thread until resume_trace (calls nest; nothing happens when
// not tracing).
void pause_trace();
void resume_trace();

}  // namespace oneflow::graph
