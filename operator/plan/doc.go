// Package plan defines a multi-step plan: a goal and the operator calls
// (steps) that reach it, in the JSON form a model writes, and the rules a
// plan must follow to run.
//
// A [Plan] is data. A model writes one (an agent's workflow
// decision carries one), [Parse] decodes it, and [Plan.Validate] checks it
// against the rules of the executor in package operator/workflow, which
// runs it. Because the model's validator and the executor's are the same
// function, a plan that passes the one runs on the other, and the error a
// model gets back as feedback is the one the executor would report.
//
// Steps pass data through templates in their input mappings:
// {{user_query}} is the user's query, {{STEP.output}} the whole output of
// step STEP and {{STEP.FIELD}} one field of it. A step may read only the
// steps it lists in depends_on. [ParseTemplate] finds the references of a
// template for an executor that resolves them.
//
// The package imports only the standard library, so that any layer (the
// model layer, an executor, a server) can share it.
package plan
