print("clubroom")
