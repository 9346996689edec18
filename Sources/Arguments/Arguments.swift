// Arguments
