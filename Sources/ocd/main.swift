import OpenCoreData
print("ocd")
