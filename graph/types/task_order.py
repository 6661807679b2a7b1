import strawberry

from resolvers.read import task_list

TaskOrder = strawberry.enum(task_list.TaskOrder, description="The order tasks() lists in; ties go by id.")
