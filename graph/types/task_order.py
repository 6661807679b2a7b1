import strawberry

from resolvers import task_list

TaskOrder = strawberry.enum(task_list.TaskOrder, description="The order tasks() lists in; ties go by id.")
