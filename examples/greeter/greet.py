def greet(name):
    print("Hello, " + name)


def farewell(name):
    print("Goodbye, " + name)
